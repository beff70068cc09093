"""The scaled-out shape for fault scenarios: api, conductor, scheduler and compute as four
processes on RabbitMQ, PostgreSQL databases, Placement over HTTP (embedded in the test
process, so it outlives every role it serves)."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from openkeel.clients.placement_embedded import DB_FILE, EmbeddedPlacement
from openkeel.db import cells, migrate
from openkeel.db.engine import make_engine
from tests.db.backends import DatabaseFactory
from tests.e2e.conftest import _free_port
from tests.faults.processes import Process, nova_conf, role, wait_http
from tests.faults.scenario import CONDUCTOR, DEFAULTS
from tests.faults.state import ADMIN, Deployment

ROLES = ("scheduler", "conductor", "compute", "api")
TRANSPORT = "rabbit://guest:guest@127.0.0.1:5672/"


def require_rabbit() -> None:
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=1).close()
    except OSError:
        message = "RabbitMQ not reachable at 127.0.0.1:5672 — start it (rabbitmq-server -detached)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class ScaledOut:
    """The running roles, where they answer and where their state is."""

    processes: dict[str, Process]
    deployment: Deployment

    @property
    def url(self) -> str:
        return self.deployment.api_url

    def wait_api(self) -> None:
        wait_http(self.url + "/v2.1/", self.processes.values())

    def wait_compute(self, timeout: float = 60) -> None:
        """Until the compute host has registered its hypervisor."""
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.url, headers=ADMIN, timeout=10) as api:
            while not api.get("/v2.1/os-hypervisors").json()["hypervisors"]:
                assert time.monotonic() < deadline, "the compute host never registered"
                time.sleep(0.2)  # polling a process we started, bounded by the deadline


def _databases(factory: DatabaseFactory) -> dict[str, str]:
    urls = {n: factory.url("postgresql", f"faults_{n}") for n in ("api", "cell0", "cell1")}
    for name, url in urls.items():
        engine = make_engine(url)
        migrate.upgrade(engine, "api" if name == "api" else "cell")
        engine.dispose()
    api_db = make_engine(urls["api"])
    cells.map_cell0(api_db, urls["cell0"])
    cells.create_cell(
        api_db, name="cell1", transport_url=TRANSPORT, database_connection=urls["cell1"]
    )
    api_db.dispose()
    return urls


@contextmanager
def scaled_out(
    tmp_path: Path, factory: DatabaseFactory, **sections: dict[str, str]
) -> Iterator[ScaledOut]:
    """Start the four roles; stop them (and Placement) when the block ends. ``sections``
    (``fake_driver={...}``, ``DEFAULT={...}``) are one more configuration file of every role,
    read last."""
    require_rabbit()
    urls = _databases(factory)
    placement = EmbeddedPlacement(tmp_path / "placement").start()
    port = _free_port()
    conf = nova_conf(
        tmp_path / "nova.conf",
        DEFAULT={"transport_url": TRANSPORT, "host": f"faults-{uuid.uuid4().hex[:6]}",
                 "control_exchange": f"openkeel_faults_{uuid.uuid4().hex[:8]}",
                 "osapi_compute_listen_port": str(port), **DEFAULTS},
        api={"auth_strategy": "noauth2"},
        api_database={"connection": urls["api"]},
        database={"connection": urls["cell1"]},
        placement={"endpoint_override": placement.serve_http(), "auth_type": "admin_token",
                   "token": "admin"},
        conductor=CONDUCTOR,
    )  # fmt: skip
    processes = {name: role(name, conf, tmp_path) for name in ROLES}
    # The compute role logs at debug level: a start-up failure's cause is logged only there.
    debug = nova_conf(tmp_path / "debug.conf", DEFAULT={"debug": "true"})
    processes["compute"].argv += ["--config-file", str(debug)]
    extra = nova_conf(tmp_path / "extra.conf", **sections)
    for process in processes.values():
        process.argv += ["--config-file", str(extra)]
    placement_db = f"sqlite:///{tmp_path / 'placement' / DB_FILE}"
    cloud = ScaledOut(processes, Deployment(f"http://127.0.0.1:{port}", urls["api"], placement_db))
    try:
        for process in processes.values():
            process.start()
        cloud.wait_api()
        cloud.wait_compute()
        yield cloud
    finally:
        for process in processes.values():
            process.stop()
        placement.stop()
