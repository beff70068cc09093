"""Issue 7 item 9 end to end: a Kubernetes Node without ``ephemeral-storage`` in its status.

The all-in-one runs on KubeVirt against the real kube-apiserver (through the test's virt-api
proxy, which shows it only this test's Nodes): one Node reports ephemeral-storage, one does
not. The all-in-one must start, list both as hypervisors (the second with 0 GB of disk) and give
the second's Placement provider no DISK_GB inventory (Placement refuses a total of 0). Skips
locally (fails under ``CI``) when the API server is not answering.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
import urllib.request
from pathlib import Path
from typing import Any

from openkeel.virt.kubevirt import client as k
from tests.e2e.conftest import RunningCloud, all_in_one
from tests.e2e.kubevirt_proxy import VirtApiProxy
from tests.virt.kubevirt import kube_env
from tests.virt.kubevirt.simulator import StandInVirtApi

DEADLINE = 30.0
DISK_GB = 2  # Placement's id of the standard resource class DISK_GB (VCPU 0, MEMORY_MB 1)


def _node_without_storage(client: k.KubeClient, name: str) -> None:
    labels = {k.HOSTNAME_LABEL: name, "kubevirt.io/schedulable": "true"}  # virt-handler's
    client.ensure(k.NODES, {"metadata": {"name": name, "labels": labels}})
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    status = {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    }
    client.patch(k.NODES, name, {"status": status}, sub="status")


def _hypervisors(cloud: RunningCloud) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{cloud.url}/os-hypervisors/detail", headers={"X-Auth-Token": cloud.token()}
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return {h["hypervisor_hostname"]: h for h in json.loads(resp.read())["hypervisors"]}


def _wait_for_hypervisors(cloud: RunningCloud, names: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE
    while True:
        found = _hypervisors(cloud)
        if set(found) >= names:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"hypervisors {sorted(found)}, expected {sorted(names)}")
        time.sleep(0.1)  # polling another process, bounded by the deadline


def _resource_classes(data_dir: Path) -> dict[str, set[int]]:
    """Provider name -> resource class ids of its inventories (the embedded Placement's DB)."""
    query = (
        "SELECT rp.name, i.resource_class_id FROM inventories i"
        " JOIN resource_providers rp ON rp.id = i.resource_provider_id"
    )
    found: dict[str, set[int]] = {}
    with sqlite3.connect(f"file:{data_dir / 'placement.sqlite'}?mode=ro", uri=True) as db:
        for name, rc in db.execute(query):
            found.setdefault(name, set()).add(rc)
    return found


def test_all_in_one_starts_with_a_node_without_ephemeral_storage(tmp_path: Path) -> None:
    client = kube_env.connect()
    if client is None:
        kube_env.unavailable(f"no answer with {kube_env.KUBECONFIG}")
    prefix = f"oke-{secrets.token_hex(3)}-"
    full, diskless = f"{prefix}full", f"{prefix}diskless"
    try:
        kube_env.ensure_node(client, full, storage="500Gi")
        _node_without_storage(client, diskless)
        proxy = VirtApiProxy(client.config, StandInVirtApi(client), node_prefix=prefix).start()
        try:
            kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig-proxy")
            with all_in_one(tmp_path, "--kubeconfig", str(kubeconfig)) as cloud:
                hypervisors = _wait_for_hypervisors(cloud, {full, diskless})
                classes = _resource_classes(tmp_path)
        finally:
            proxy.stop()
    finally:
        for name in (full, diskless):
            client.delete(k.NODES, name)
        client.close()
    assert (hypervisors[full]["local_gb"], hypervisors[diskless]["local_gb"]) == (500, 0)
    assert hypervisors[diskless]["state"] == "up"
    assert DISK_GB in classes[full]
    assert classes[diskless] == {0, 1}  # VCPU and MEMORY_MB, no DISK_GB
