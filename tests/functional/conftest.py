"""A whole cloud in one test process: API, conductor, scheduler and compute roles talking RPC.

Parametrized over both transports (in-process and RabbitMQ) and, for the lifecycle test, over the
three database backends. Placement is the real one, embedded (one per process, so one per package).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd.bootstrap import seed_standard_flavors
from openkeel.cmd.roles import RoleSet, api_clients, start_compute, start_conductor, start_scheduler
from openkeel.compute.service import ComputeService
from openkeel.conf import make_config
from openkeel.db import migrate
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from openkeel.rpc.transport import get_transport
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from tests.client import ApiClient
from tests.conftest import CELL1_UUID, make_services
from tests.db.backends import DatabaseFactory, database_factory

__all__ = ["database_factory"]

RABBIT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
IMAGE = "f889e72b-5f7e-546f-a852-ffb79bfbb64f"
TRANSIENT = frozenset({"BUILD"})


def _rabbit_or_skip() -> None:
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=1).close()
    except OSError:
        message = "RabbitMQ not reachable at 127.0.0.1:5672 — start it (rabbitmq-server -detached)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPlacement]:
    embedded = EmbeddedPlacement(tmp_path_factory.mktemp("placement")).start()
    yield embedded
    embedded.stop()


@pytest.fixture(params=["inproc", "rabbit"])
def transport_url(request: pytest.FixtureRequest) -> str:
    if request.param == "rabbit":
        _rabbit_or_skip()
        return RABBIT_URL
    return f"inproc://functional-{uuid.uuid4().hex[:8]}"


class Gate:
    """A sleep for the fake driver that blocks until released (a guest stuck mid-spawn)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._release = threading.Event()

    def sleep(self, _seconds: float) -> None:
        self.entered.set()
        self._release.wait(60)

    def sleep_once(self, seconds: float) -> None:
        """Block the first call only: a compute service restarted on the same driver passes."""
        if not self.entered.is_set():
            self.sleep(seconds)

    def release(self) -> None:
        self._release.set()


@dataclass
class Cloud:
    """The running cloud of one test."""

    api: ApiClient
    services: ApiServices
    placement: PlacementClient
    roles: RoleSet
    computes: dict[str, ComputeService] = field(default_factory=dict)
    gates: list[Gate] = field(default_factory=list)

    def add_compute(
        self, host: str | None = None, *, delays: dict[str, float] | None = None,
        sleep: Callable[[float], None] | None = None, driver: FakeDriver | None = None,
    ) -> ComputeService:  # fmt: skip
        """Start a compute host with a fake driver (``delays`` per operation, seconds); with
        ``driver``, on that one (a compute service restarted over a hypervisor that kept its
        guests)."""
        host = host or f"host-{uuid.uuid4().hex[:8]}"
        config = FakeDriverConfig(nodes=(f"{host}-node",), delays=delays or {})
        driver = driver or FakeDriver(config, sleep=sleep or (lambda _s: None))
        cell = (CELL1_UUID, self.services.cell_dbs[CELL1_UUID])
        service = start_compute(
            self.services.conf, self.roles.transport, self.placement, self.services.api_db,
            cell, driver, host,
        )  # fmt: skip
        self.computes[host] = service
        self.roles.computes.append(service)
        return service

    def boot(self, name: str = "vm", flavor: str = "1", **extra: Any) -> dict[str, Any]:
        """POST /servers (2.37, no network unless given); returns the 202 body's server."""
        body = {
            "server": {
                "name": name,
                "imageRef": IMAGE,
                "flavorRef": flavor,
                "networks": "none",
                **extra,
            }
        }
        resp = self.api.post("/v2.1/servers", body, version="2.37")
        assert resp.status_code == 202, resp.text
        server: dict[str, Any] = resp.json()["server"]
        return server

    def wait(self, server_id: str, *, gone: bool = False, timeout: float = 30) -> dict[str, Any]:
        """Poll GET /servers/{id} until it leaves BUILD (or answers 404 with ``gone``)."""
        deadline = time.monotonic() + timeout
        while True:
            resp = self.api.get(f"/v2.1/servers/{server_id}", version="latest")
            if gone and resp.status_code == 404:
                return {}
            if not gone and resp.status_code == 200:
                server: dict[str, Any] = resp.json()["server"]
                if server["status"] not in TRANSIENT and server["OS-EXT-STS:task_state"] is None:
                    return server
            if time.monotonic() > deadline:
                raise AssertionError(f"server {server_id} still {resp.status_code} {resp.text}")
            time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline

    def events(
        self, server_id: str, action: str, version: str = "2.1", *, eventless: bool = False
    ) -> dict[str, Any]:
        """The named instance action's events and results, once the action is over: its task
        state cleared and no event still running.

        As in Nova, a role saves the instance (clearing its task state) before it finishes the
        event, so a caller that saw the task state clear may briefly see the event running;
        and between one role's event and the next role's (conductor, then compute) every
        event may be finished while the task state is still set. ``eventless``: the action
        is expected to have no event at all.
        """
        deadline = time.monotonic() + 30
        base = f"/v2.1/servers/{server_id}/os-instance-actions"
        while True:
            listed = self.api.get(base, version=version).json()["instanceActions"]
            (found,) = [a for a in listed if a["action"] == action]
            detail = self.api.get(f"{base}/{found['request_id']}", version=version)
            events = {e["event"]: e["result"] for e in detail.json()["instanceAction"]["events"]}
            server = self.api.get(f"/v2.1/servers/{server_id}", version="latest")
            busy = server.status_code == 200 and server.json()["server"]["OS-EXT-STS:task_state"]
            if ((events or eventless) and None not in events.values() and not busy) or (
                time.monotonic() > deadline
            ):
                return events
            time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline

    def usage(self) -> dict[str, int]:
        """Placement usage summed over this cloud's compute providers."""
        total: dict[str, int] = {}
        for service in self.computes.values():
            for node in service.host.driver.get_available_nodes():
                rp = self._provider(node)
                for rc, amount in self.placement.get_provider_usages(rp).items():
                    total[rc] = total.get(rc, 0) + amount
        return {rc: amount for rc, amount in total.items() if amount}

    def _provider(self, node: str) -> str:
        found = [p.uuid for p in self.placement.list_providers() if p.name == node]
        assert found, node
        return found[0]


def server_db_services(factory: DatabaseFactory, backend: str, tmp: Path) -> ApiServices:
    """API DB, cell0 and cell1 on a database server, migrated and mapped."""
    urls = {name: factory.url(backend, name) for name in ("api", "cell0", "cell1")}  # type: ignore[arg-type]
    api_db = make_engine(urls["api"])
    migrate.upgrade(api_db, "api")
    cells: dict[str, sa.Engine] = {}
    for cell_uuid, key in ((CELL0_UUID, "cell0"), (CELL1_UUID, "cell1")):
        engine = make_engine(urls[key])
        migrate.upgrade(engine, "cell")
        cells[cell_uuid] = engine
        with api_db.begin() as conn:
            conn.execute(sa.insert(api_schema.cell_mappings).values(
                uuid=cell_uuid, name=key, transport_url="inproc://",
                database_connection=urls[key], disabled=False))  # fmt: skip
    conf = make_config(overrides={"api.auth_strategy": "noauth2",
                                  "api_database.connection": urls["api"]})  # fmt: skip
    return ApiServices(conf=conf, api_db=api_db, cell_dbs=cells)


def start_cloud(services: ApiServices, placement: EmbeddedPlacement, url: str) -> Cloud:
    """Scheduler, conductor and the API on ``url``'s transport (no compute host yet)."""
    transport = get_transport(url, exchange=f"openkeel_test_{uuid.uuid4().hex[:8]}")
    client = placement.client()
    roles = RoleSet(transport)
    conf, api_db, cells = services.conf, services.api_db, services.cell_dbs
    roles.scheduler = start_scheduler(conf, transport, client, api_db, cells)
    roles.conductor = start_conductor(conf, transport, client, api_db, cells)
    for name, value in api_clients(transport).items():
        setattr(services, name, value)
    services.placement = client
    seed_standard_flavors(api_db)
    return Cloud(ApiClient(build_api_app(services)), services, client, roles)


def stop_cloud(cloud: Cloud) -> None:
    for gate in cloud.gates:
        gate.release()
    cloud.api.close()
    cloud.roles.stop()
    cloud.roles.transport.close()
    for engine in (cloud.services.api_db, *cloud.services.cell_dbs.values()):
        engine.dispose()


@pytest.fixture
def cloud(tmp_path: Path, placement: EmbeddedPlacement, transport_url: str) -> Iterator[Cloud]:
    """A cloud on SQLite with one compute host, on each transport."""
    built = start_cloud(make_services(tmp_path), placement, transport_url)
    built.add_compute()
    yield built
    stop_cloud(built)
