"""Live migration across every role (api → conductor → scheduler → two computes), on both
transports: scheduled destination, explicit host (2.30 forced, 2.68 through the scheduler), and
abort of a running migration (a gated fake driver holds the migration mid-way)."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from openkeel.cmd.api import network_service
from openkeel.cmd.roles import start_compute
from openkeel.compute.service import ComputeService
from openkeel.network.embedded import port_bindings
from openkeel.network.embedded.service import Caller, NetworkService
from openkeel.virt.driver import ProgressCallback
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig
from openkeel.virt.model import InstanceRef
from tests.conftest import CELL1_UUID
from tests.functional.conftest import Cloud

TINY = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}
ADMIN = "admin:admin"


class GatedDriver(FakeDriver):
    """Holds live_migration after its first progress report until aborted (or released)."""

    def __init__(self, config: FakeDriverConfig) -> None:
        super().__init__(config, sleep=lambda _s: None)
        self.reported = threading.Event()
        self.release = threading.Event()

    def live_migration(
        self,
        instance: InstanceRef,
        dest_host: str,
        on_progress: ProgressCallback,
        *,
        block_migration: bool = False,
    ) -> None:
        def gated(progress: Any) -> None:
            on_progress(progress)
            if not self.reported.is_set():
                self.reported.set()
                self.release.wait(30)

        super().live_migration(instance, dest_host, gated, block_migration=block_migration)

    def live_migration_abort(self, instance: InstanceRef) -> None:
        super().live_migration_abort(instance)
        self.release.set()


def _add_gated(cloud: Cloud) -> tuple[str, GatedDriver]:
    host = f"gated-{uuid.uuid4().hex[:8]}"
    driver = GatedDriver(FakeDriverConfig(nodes=(f"{host}-node",)))
    cell = (CELL1_UUID, cloud.services.cell_dbs[CELL1_UUID])
    service: ComputeService = start_compute(
        cloud.services.conf, cloud.roles.transport, cloud.placement, cloud.services.api_db,
        cell, driver, host,
    )  # fmt: skip
    cloud.computes[host] = service
    cloud.roles.computes.append(service)
    cloud.gates.append(_Releaser(driver))  # type: ignore[arg-type]
    return host, driver


class _Releaser:
    """Lets stop_cloud unblock a gated driver like its own gates."""

    def __init__(self, driver: GatedDriver) -> None:
        self._driver = driver

    def release(self) -> None:
        self._driver.release.set()


def _live(cloud: Cloud, server_id: str, body: dict[str, Any], version: str) -> None:
    resp = cloud.api.post(
        f"/v2.1/servers/{server_id}/action", {"os-migrateLive": body}, version=version, token=ADMIN
    )
    assert resp.status_code == 202, resp.text


def _host(server: dict[str, Any]) -> str:
    host: str = server["OS-EXT-SRV-ATTR:host"]
    return host


def _usage_on(cloud: Cloud, host: str) -> dict[str, int]:
    service = cloud.computes[host]
    usage: dict[str, int] = {}
    for node in service.host.driver.get_available_nodes():
        rp = next(p.uuid for p in cloud.placement.list_providers() if p.name == node)
        usage.update({k: v for k, v in cloud.placement.get_provider_usages(rp).items() if v})
    return usage


def _migrations(cloud: Cloud, server_id: str) -> list[dict[str, Any]]:
    resp = cloud.api.get(f"/v2.1/os-migrations?instance_uuid={server_id}", version="2.80",
                         token=ADMIN)  # fmt: skip
    assert resp.status_code == 200, resp.text
    items: list[dict[str, Any]] = resp.json()["migrations"]
    return items


def _wait_migration(cloud: Cloud, server_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        found = [
            m for m in _migrations(cloud, server_id) if m["migration_type"] == "live-migration"
        ]
        if found and found[0]["status"] == status:
            return found[0]
        assert time.monotonic() < deadline, found
        time.sleep(0.05)  # polling a real RPC cast, bounded by the deadline


def _booted(cloud: Cloud) -> tuple[str, str]:
    server = cloud.wait(cloud.boot("live")["id"])
    assert server["status"] == "ACTIVE", server
    return server["id"], _host(server)


def test_live_migrate_to_scheduled_host(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    cloud.add_compute()
    _live(cloud, server_id, {"host": None, "block_migration": "auto"}, "2.25")
    _wait_migration(cloud, server_id, "completed")
    server = cloud.wait(server_id)
    assert (server["status"], server["OS-EXT-STS:vm_state"]) == ("ACTIVE", "active")
    dest = _host(server)
    assert dest != source
    assert _usage_on(cloud, dest) == TINY
    assert _usage_on(cloud, source) == {}
    assert cloud.usage() == TINY
    migration = _wait_migration(cloud, server_id, "completed")
    assert (migration["source_compute"], migration["dest_compute"]) == (source, dest)
    body = cloud.api.get(f"/v2.1/servers/{server_id}/os-instance-actions").json()
    assert "live-migration" in [a["action"] for a in body["instanceActions"]]


def test_live_migrate_to_forced_host_2_30(cloud: Cloud) -> None:
    server_id, _source = _booted(cloud)
    target = cloud.add_compute().host.host
    body = {"host": target, "block_migration": False, "force": True}
    _live(cloud, server_id, body, "2.30")
    _wait_migration(cloud, server_id, "completed")
    server = cloud.wait(server_id)
    assert (server["status"], _host(server)) == ("ACTIVE", target)
    assert _usage_on(cloud, target) == TINY
    assert cloud.usage() == TINY


def test_live_migrate_to_requested_host_2_68(cloud: Cloud) -> None:
    server_id, _source = _booted(cloud)
    cloud.add_compute()
    target = cloud.add_compute().host.host
    _live(cloud, server_id, {"host": target, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, server_id, "completed")
    server = cloud.wait(server_id)
    assert (server["status"], _host(server)) == ("ACTIVE", target)
    assert cloud.usage() == TINY


def test_abort_running_live_migration(cloud: Cloud) -> None:
    gated_host, gated = _add_gated(cloud)
    target = cloud.add_compute().host.host
    server2 = _on_host(cloud, gated_host)
    _live(cloud, server2, {"host": target, "block_migration": "auto", "force": True}, "2.30")
    assert gated.reported.wait(30)
    running = _wait_migration(cloud, server2, "running")
    listed = cloud.api.get(f"/v2.1/servers/{server2}/migrations", version="2.80", token=ADMIN)
    assert listed.status_code == 200, listed.text
    (item,) = listed.json()["migrations"]
    assert (item["id"], item["status"], item["server_uuid"]) == (running["id"], "running", server2)
    assert item["memory_total_bytes"] == 512 * 1024 * 1024
    resp = cloud.api.delete(f"/v2.1/servers/{server2}/migrations/{running['id']}",
                            version="2.24", token=ADMIN)  # fmt: skip
    assert resp.status_code == 202, resp.text
    _wait_migration(cloud, server2, "cancelled")
    server = cloud.wait(server2)
    assert (server["status"], _host(server)) == ("ACTIVE", gated_host)
    assert _usage_on(cloud, gated_host) == TINY
    assert _usage_on(cloud, target) == {}


def _on_host(cloud: Cloud, host: str) -> str:
    """Boot a server forced onto ``host`` (admin, availability_zone nova:host)."""
    body = {"server": {"name": "gated", "imageRef": "f889e72b-5f7e-546f-a852-ffb79bfbb64f",
                       "flavorRef": "1", "networks": "none", "host": host}}  # fmt: skip
    resp = cloud.api.post("/v2.1/servers", body, version="2.74", token=ADMIN)
    assert resp.status_code == 202, resp.text
    server = cloud.wait(resp.json()["server"]["id"])
    assert (server["status"], _host(server)) == ("ACTIVE", host), server
    sid: str = server["id"]
    return sid


def test_no_valid_host_rolls_back(cloud: Cloud) -> None:
    server_id, source = _booted(cloud)
    _live(cloud, server_id, {"host": None, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, server_id, "error")
    server = cloud.wait(server_id)
    assert (server["status"], _host(server)) == ("ACTIVE", source)
    assert _usage_on(cloud, source) == TINY
    assert cloud.usage() == TINY


class _SeesBindings(FakeDriver):
    """Records the embedded network's bindings of the guest's port while the guest moves."""

    def __init__(self, service: NetworkService, host: str) -> None:
        super().__init__(FakeDriverConfig(nodes=(f"{host}-node",)), sleep=lambda _s: None)
        self.service = service
        self.seen: list[dict[str, str]] = []

    def live_migration(self, instance: InstanceRef, dest_host: str, on_progress: ProgressCallback, *, block_migration: bool = False) -> None:  # fmt: skip
        for port in self.service.store.list("ports", device_id=instance.uuid):
            found = port_bindings.list_bindings(self.service, Caller(None, True), port["id"])
            self.seen.append({b["host"]: b["status"] for b in found})
        super().live_migration(instance, dest_host, on_progress, block_migration=block_migration)


def test_live_migration_binds_the_embedded_networks_ports_on_the_destination(cloud: Cloud) -> None:
    """The all-in-one's network has multiple port bindings (decision 0072): inactive on the
    destination while the guest moves, active there after, the source's gone."""
    service = network_service(cloud.services.api_db)
    source = f"src-{uuid.uuid4().hex[:8]}"
    seeing = _SeesBindings(service, source)
    cloud.add_compute(source, driver=seeing)
    server = cloud.wait(
        cloud.boot("live", networks="auto", availability_zone=f"nova:{source}")["id"]
    )
    assert _host(server) == source, server
    dest = cloud.add_compute().host.host
    _live(cloud, server["id"], {"host": dest, "block_migration": "auto"}, "2.68")
    _wait_migration(cloud, server["id"], "completed")
    assert seeing.seen == [{source: "ACTIVE", dest: "INACTIVE"}]
    (port,) = service.store.list("ports", device_id=server["id"])
    found = port_bindings.list_bindings(service, Caller(None, True), port["id"])
    assert [(b["host"], b["status"]) for b in found] == [(dest, "ACTIVE")]
