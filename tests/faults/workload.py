"""A random mix of server operations from a few client threads, for faults to land in.

Operations: boot (``networks`` none or auto), boot then delete at once, resize then confirm or
revert, stop then start, delete. Each thread draws from its own ``random.Random`` seeded from
the scenario's seed, so a failing mix can be replayed (timings differ, the choices do not).
Connection errors are expected (the cloud is being killed): the thread records them, waits
until :attr:`Workload.up` is set again and goes on. Waits are polls bounded by a deadline.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

IMAGE = "f889e72b-5f7e-546f-a852-ffb79bfbb64f"
FLAVORS = {"fi.a": (256, 1), "fi.b": (384, 2)}  # name: (ram, vcpus); same disk for resizes
VERSION = {"OpenStack-API-Version": "compute 2.47"}
OPERATIONS = (
    ("boot", 30),
    ("boot_delete", 25),
    ("resize", 15),
    ("stop_start", 15),
    ("delete", 15),
)


def create_flavors(api: httpx.Client) -> None:
    """The two flavors the mix resizes between (idempotent)."""
    for name, (ram, vcpus) in FLAVORS.items():
        body = {"flavor": {"name": name, "ram": ram, "vcpus": vcpus, "disk": 1, "id": name}}
        answer = api.post("/v2.1/flavors", json=body, headers={"X-Auth-Token": "admin:admin"})
        assert answer.status_code in (200, 409), answer.text


def set_quotas(api: httpx.Client, projects: list[str], instances: int) -> None:
    body = {"quota_set": {"instances": instances, "cores": 4 * instances, "ram": 1024 * instances}}
    for project in projects:
        answer = api.put(
            f"/v2.1/os-quota-sets/{project}", json=body, headers={"X-Auth-Token": "admin:admin"}
        )
        assert answer.status_code == 200, answer.text


@dataclass
class Workload:
    """``threads`` clients run ``total`` operations against ``url`` (``http://host:port``)."""

    url: str
    projects: list[str]
    seed: int
    total: int = 200
    threads: int = 4
    up: threading.Event = field(default_factory=threading.Event)
    started: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    booted: set[str] = field(default_factory=set)
    journal: list[str] = field(default_factory=list)  # one line per operation, in end order
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        self.up.set()
        for index in range(self.threads):
            worker = threading.Thread(target=self._run, args=(index,), name=f"workload-{index}")
            worker.start()
            self._workers.append(worker)

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        alive = [w.name for w in self._workers if w.is_alive()]
        assert not alive, f"workload threads still running after {timeout}s: {alive}"

    def wait_started(self, count: int, timeout: float) -> None:
        """Block until ``count`` operations have started (or all are done, or timeout)."""
        deadline = time.monotonic() + timeout
        while self.started < min(count, self.total) and time.monotonic() < deadline:
            if not any(w.is_alive() for w in self._workers):
                return
            time.sleep(0.02)  # polling our own threads' progress, bounded by the deadline

    def _take(self) -> bool:
        with self._lock:
            if self.started >= self.total:
                return False
            self.started += 1
            return True

    def _record(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def _run(self, index: int) -> None:
        rng = random.Random(self.seed * 100 + index)
        client = Client(self, rng, self.projects[index % len(self.projects)])
        names = [name for name, _ in OPERATIONS]
        weights = [weight for _, weight in OPERATIONS]
        with client:
            while self._take():
                operation = rng.choices(names, weights)[0]
                if not self.up.wait(120):
                    self._record("gave up: cloud never came back")
                    return
                began = time.strftime("%H:%M:%S")
                try:
                    result = getattr(client, operation)()
                except httpx.HTTPError as exc:
                    result = f"{type(exc).__name__}"
                self._record(f"{operation}: {result}")
                with self._lock:
                    ended = time.strftime("%H:%M:%S")
                    line = f"{began}-{ended} w{index} {operation} {client.target}: {result}"
                    self.journal.append(line)


class Client:
    """One thread's client: its project, its servers, its random choices."""

    def __init__(self, workload: Workload, rng: random.Random, project: str) -> None:
        self.workload = workload
        self.rng = rng
        self.project = project
        self.servers: list[str] = []
        self.target = "-"  # the server the current operation is about
        self.http = httpx.Client(
            base_url=workload.url,
            headers={"X-Auth-Token": f"{project}:{project}", **VERSION},
            timeout=httpx.Timeout(15, connect=2),
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.http.close()

    def _boot(self) -> tuple[int, str | None]:
        body = {
            "server": {
                "name": f"fi-{self.rng.randrange(10**6)}",
                "imageRef": IMAGE,
                "flavorRef": self.rng.choice(list(FLAVORS)),
                "networks": self.rng.choice(["none", "auto"]),
            }
        }
        answer = self.http.post("/v2.1/servers", json=body)
        if answer.status_code != 202:
            return answer.status_code, None
        uuid: str = answer.json()["server"]["id"]
        self.target = uuid
        with self.workload._lock:
            self.workload.booted.add(uuid)
        return 202, uuid

    def boot(self) -> str:
        self.target = "-"
        status, uuid = self._boot()
        if uuid:
            self.servers.append(uuid)
        return str(status)

    def boot_delete(self) -> str:
        self.target = "-"
        status, uuid = self._boot()
        if uuid is None:
            return str(status)
        # A random pause of 0-300 ms lands the delete in a different build step each time.
        time.sleep(self.rng.choice([0, 0, 0.02, 0.1, 0.3]))
        return f"{status}+{self.http.delete(f'/v2.1/servers/{uuid}').status_code}"

    def delete(self) -> str:
        if not self.servers:
            return self.boot()
        uuid = self.servers.pop(self.rng.randrange(len(self.servers)))
        self.target = uuid
        return str(self.http.delete(f"/v2.1/servers/{uuid}").status_code)

    def _action(self, uuid: str, body: dict[str, Any]) -> int:
        return self.http.post(f"/v2.1/servers/{uuid}/action", json=body).status_code

    def _status(self, uuid: str) -> str:
        answer = self.http.get(f"/v2.1/servers/{uuid}")
        if answer.status_code != 200:
            return str(answer.status_code)
        server = answer.json()["server"]
        task = server.get("OS-EXT-STS:task_state")
        return str(server["status"]) if task is None else f"{server['status']}/{task}"

    def _poll(self, uuid: str, done: Callable[[str], bool], timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            status = self._status(uuid)
            if done(status) or time.monotonic() > deadline:
                return status
            time.sleep(0.1)  # polling the product's asynchrony, bounded by the deadline

    def _active_server(self) -> str | None:
        self.target = "-"
        for uuid in self.rng.sample(self.servers, len(self.servers)):
            if self._poll(uuid, lambda s: "/" not in s and s != "BUILD", 10) == "ACTIVE":
                self.target = uuid
                return uuid
        return None

    def resize(self) -> str:
        uuid = self._active_server()
        if uuid is None:
            return self.boot()
        server = self.http.get(f"/v2.1/servers/{uuid}").json()["server"]
        target = next(f for f in FLAVORS if f != server["flavor"]["original_name"])
        code = self._action(uuid, {"resize": {"flavorRef": target}})
        if code != 202:
            return f"resize {code}"
        status = self._poll(uuid, lambda s: "/" not in s)
        if status != "VERIFY_RESIZE":
            return f"resize -> {status}"
        verb = self.rng.choice(["confirmResize", "revertResize"])
        return f"{verb} {self._action(uuid, {verb: None})}"

    def stop_start(self) -> str:
        uuid = self._active_server()
        if uuid is None:
            return self.boot()
        code = self._action(uuid, {"os-stop": None})
        if code != 202:
            return f"stop {code}"
        status = self._poll(uuid, lambda s: "/" not in s)
        if status != "SHUTOFF":
            return f"stop -> {status}"
        return f"start {self._action(uuid, {'os-start': None})}"
