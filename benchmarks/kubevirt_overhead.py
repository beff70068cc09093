"""Time OpenKeel's KubeVirt driver adds from spawn() to the VirtualMachine existing.

Run against the real kube-apiserver (``bash scripts/start-kube-apiserver.sh`` first):
``python -m benchmarks.kubevirt_overhead [--spawns 10] [--rounds 3]``. Each round starts
``--spawns`` concurrent spawn(power_on=False) calls; a VM watch records when each
VirtualMachine's ADDED event arrives. Prints p50/p99 of (ADDED seen - spawn() called) and of
the whole spawn() call; target p99 < 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.watch import Watcher
from openkeel.virt.model import FlavorSpec, ImageSpec, InstanceRef, InstanceSpec, NetworkInterface
from tests.virt.kubevirt import kube_env

FLAVOR = FlavorSpec("1", "m1.small", vcpus=1, memory_mb=512, root_gb=1)
IMAGE = ImageSpec("155d900f-4e14-4e4c-a73d-069cbf4541e6", disk_format="qcow2")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def spec() -> InstanceSpec:
    server_id = str(uuid.uuid4())
    port = NetworkInterface(f"p-{server_id[:8]}", "n-1", "fa:16:3e:00:00:01", ("10.0.0.3",))
    ref = InstanceRef(server_id, f"instance-{server_id[:8]}", "bench")
    return InstanceSpec(ref, "vm", "user", FLAVOR, IMAGE, network=(port,), user_data="aGk=")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spawns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if kube_env.connect() is None:
        print(f"kube-apiserver not answering ({kube_env.KUBECONFIG}); {kube_env.HOW}")
        return 2
    kube = kube_env.session()
    driver = kube.driver("bench", kube.node_prefix())
    seen: dict[str, float] = {}
    lock = threading.Lock()

    def on_vm(kind: str, vm: k.JsonObj) -> None:
        if kind == "ADDED":
            with lock:
                seen.setdefault(vm["metadata"]["name"], time.perf_counter())

    watcher = Watcher(kube.client, k.VMS, on_vm, namespace=driver._ns(spec().ref)).start()
    watcher.synced.wait(10)
    to_vm: list[float] = []
    whole: list[float] = []
    started: dict[str, float] = {}
    for _round in range(args.rounds):
        specs = [spec() for _ in range(args.spawns)]
        started.clear()

        def run(s: InstanceSpec) -> None:
            started[naming.vm_name(s.uuid)] = t0 = time.perf_counter()
            driver.spawn(s, power_on=False)
            whole.append(time.perf_counter() - t0)

        with ThreadPoolExecutor(args.spawns) as pool:
            list(pool.map(run, specs))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(n in seen for n in started):
            time.sleep(0.01)
        to_vm += [seen[n] - t for n, t in started.items() if n in seen]
        for s in specs:
            driver.destroy(s.ref)
    watcher.stop()
    kube.simulator.stop()
    n = len(to_vm)
    print(f"{n} spawns ({args.rounds} rounds of {args.spawns} concurrent)")
    print(f"spawn() -> VirtualMachine ADDED: p50 {percentile(to_vm, 50) * 1000:.0f} ms, "
          f"p99 {percentile(to_vm, 99) * 1000:.0f} ms, mean {statistics.mean(to_vm) * 1000:.0f} ms")  # fmt: skip
    print(f"whole spawn(power_on=False):    p50 {percentile(whole, 50) * 1000:.0f} ms, "
          f"p99 {percentile(whole, 99) * 1000:.0f} ms")  # fmt: skip
    return 0 if percentile(to_vm, 99) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
