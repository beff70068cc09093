"""Booting on the real neutron-server (scripts/start-neutron.sh): the build waits for
``network-vif-plugged`` of ports Neutron has not made ACTIVE, as Nova does.

The compute host's name picks what Neutron's test mechanism driver does (decision 0056):
``host-ovs-no_filter`` binds the port and leaves it DOWN, so no plugged event ever comes from
Neutron; ``host-ovs-filter-active`` binds it ACTIVE at once, so nothing is awaited.

Moves re-bind the ports: a cold migration and its revert, shelve/unshelve, and a live migration
with Neutron's multiple port bindings (an inactive binding on the destination while the guest
moves, activated after; deleted when the migration fails: decision 0072).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.network import get_network_adapter
from openkeel.virt.fake import FakeDriver
from openkeel.virt.fake_config import FakeDriverConfig, InjectedFailure
from tests.conftest import make_services
from tests.functional.conftest import IMAGE, Cloud, start_cloud, stop_cloud
from tests.network.neutron_server import (
    HOST_ACTIVE,
    HOST_DOWN,
    HOST_FAIL,
    NEUTRON_OPTIONS,
    Sandbox,
    neutron_project,
    sandbox,
)

__all__ = ["neutron_project", "sandbox"]

EVENTS = "/v2.1/os-server-external-events"
CloudFactory = Callable[..., Cloud]


@pytest.fixture
def neutron_cloud(
    tmp_path: Path, placement: EmbeddedPlacement, sandbox: Sandbox
) -> Iterator[CloudFactory]:
    """A cloud on the neutron backend with one compute host named ``host``."""
    made: list[Cloud] = []

    def make(*hosts: str, **options: object) -> Cloud:
        services = make_services(tmp_path, **NEUTRON_OPTIONS, **options)
        cloud = start_cloud(services, placement, f"inproc://neutron-{uuid.uuid4().hex[:8]}")
        made.append(cloud)
        for host in hosts:
            # unique node names: Placement (one per package) keeps earlier clouds' nodes
            config = FakeDriverConfig(nodes=(f"{host}-{uuid.uuid4().hex[:8]}",))
            cloud.add_compute(host, driver=FakeDriver(config, sleep=lambda _s: None))
        return cloud

    yield make
    for cloud in made:
        get_network_adapter(cloud.services.conf, cloud.services.api_db).close()
        stop_cloud(cloud)


def _boot(cloud: Cloud, box: Sandbox, network_id: str) -> str:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1",
                       "networks": [{"uuid": network_id}]}}  # fmt: skip
    resp = cloud.api.post("/v2.1/servers", body, version="2.37", token=f"user:{box.project_id}")
    assert resp.status_code == 202, resp.text
    return str(resp.json()["server"]["id"])


def _show(cloud: Cloud, sid: str) -> dict[str, Any]:
    server: dict[str, Any] = cloud.api.get(f"/v2.1/servers/{sid}", version="2.37").json()["server"]
    return server


def _delete(cloud: Cloud, sid: str) -> None:
    assert cloud.api.delete(f"/v2.1/servers/{sid}").status_code == 204
    cloud.wait(sid, gone=True)


def test_fatal_when_the_port_is_never_plugged(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_DOWN, vif_plugging_timeout=1)
    net = sandbox.private
    sid = _boot(cloud, sandbox, net["id"])
    server = cloud.wait(sid)
    assert server["status"] == "ERROR"
    assert server["fault"]["message"] == (
        f"Build of instance {sid} aborted: Failed to allocate the network(s), not rescheduling."
    )
    # nothing leaked: no port, no allocation
    assert sandbox.ports() == []
    assert cloud.usage() == {}
    _delete(cloud, sid)
    assert sandbox.ports() == []


def test_not_fatal_proceeds_without_the_event(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_DOWN, vif_plugging_timeout=1, vif_plugging_is_fatal=False)
    net = sandbox.private
    sid = _boot(cloud, sandbox, net["id"])
    server = cloud.wait(sid)
    assert server["status"] == "ACTIVE"
    assert "fault" not in server
    (port,) = sandbox.ports()
    assert (port["device_id"], port["binding:host_id"]) == (sid, HOST_DOWN)
    assert [a["addr"] for a in server["addresses"]["private"]] == [port["fixed_ips"][0]["ip_address"]]  # fmt: skip
    _delete(cloud, sid)
    assert sandbox.ports() == []
    assert cloud.usage() == {}


def test_the_build_goes_on_when_the_event_arrives(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_DOWN, vif_plugging_timeout=60)
    (service,) = cloud.computes.values()
    net = sandbox.private
    sid = _boot(cloud, sandbox, net["id"])
    deadline = time.monotonic() + 30
    while not service.host.events.pending(sid):  # the build arms its waiter after the ports
        assert time.monotonic() < deadline, _show(cloud, sid)
        time.sleep(0.05)  # polling real asynchrony (RPC casts), bounded by the deadline
    (port,) = sandbox.ports()
    assert service.host.events.pending(sid) == [f"network-vif-plugged-{port['id']}"]
    body = {"events": [{"name": "network-vif-plugged", "server_uuid": sid, "tag": port["id"]}]}
    assert cloud.api.post(EVENTS, body).status_code == 200
    assert cloud.wait(sid)["status"] == "ACTIVE"
    _delete(cloud, sid)
    assert sandbox.ports() == []


def test_a_port_active_at_binding_is_not_awaited(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_ACTIVE, vif_plugging_timeout=60)
    net = sandbox.private
    user_port = sandbox.port(net["id"])
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1",
                       "networks": [{"port": user_port["id"]}]}}  # fmt: skip
    resp = cloud.api.post("/v2.1/servers", body, version="2.37", token=f"user:{sandbox.project_id}")
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    _delete(cloud, sid)
    (left,) = sandbox.ports()  # the user's port stays, unbound
    assert (left["id"], left["device_id"], left["binding:host_id"]) == (user_port["id"], "", "")


def test_the_api_answers_novas_400s(neutron_cloud: CloudFactory, sandbox: Sandbox) -> None:
    cloud = neutron_cloud(HOST_ACTIVE)
    net = sandbox.private
    token = f"user:{sandbox.project_id}"

    def create(networks: Any, **extra: Any) -> tuple[int, str]:
        body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1",
                           "networks": networks, **extra}}  # fmt: skip
        resp = cloud.api.post("/v2.1/servers", body, version="2.37", token=token)
        return resp.status_code, str(resp.json())

    missing = str(uuid.uuid4())
    assert create([{"uuid": missing}]) == (400, _bad(f"Network {missing} could not be found."))
    code, text = create([{"uuid": net["id"], "fixed_ip": "192.168.9.9"}])
    assert code == 400 and "is not a valid ip address for network" in text
    code, text = create([{"uuid": net["id"]}], security_groups=[{"name": "nope"}])
    assert code == 400 and "Unable to find security_group with name or id 'nope'" in text
    sandbox.network("second")
    code, text = create("auto")
    assert code == 400 and "Multiple possible networks found" in text


def _bad(message: str) -> str:
    return str({"badRequest": {"code": 400, "message": message}})


def test_a_migrated_server_has_its_ports_bound_on_the_new_host(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_ACTIVE, HOST_DOWN, vif_plugging_timeout=0)
    sid = _boot(cloud, sandbox, sandbox.private["id"])
    first = cloud.wait(sid)
    assert first["status"] == "ACTIVE"
    (port,) = sandbox.ports()
    source = port["binding:host_id"]
    assert source == first["OS-EXT-SRV-ATTR:host"]
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"migrate": None}).status_code == 202
    moved = cloud.wait(sid)
    assert moved["status"] == "VERIFY_RESIZE", moved
    target = moved["OS-EXT-SRV-ATTR:host"]
    assert target != source
    assert sandbox.client.show("ports", port["id"])["binding:host_id"] == target
    assert cloud.api.post(f"/v2.1/servers/{sid}/action", {"revertResize": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert sandbox.client.show("ports", port["id"])["binding:host_id"] == source
    _delete(cloud, sid)
    assert sandbox.ports() == []


def test_shelve_unbinds_and_unshelve_binds_and_waits(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    cloud = neutron_cloud(HOST_ACTIVE, HOST_DOWN, vif_plugging_timeout=1)
    sid = _boot(cloud, sandbox, sandbox.private["id"])
    assert cloud.wait(sid)["OS-EXT-SRV-ATTR:host"] == HOST_ACTIVE  # only it binds ACTIVE
    (port,) = sandbox.ports()
    act = f"/v2.1/servers/{sid}/action"
    assert cloud.api.post(act, {"shelve": None}).status_code == 202
    assert cloud.wait(sid)["status"] == "SHELVED_OFFLOADED"
    assert sandbox.client.show("ports", port["id"])["binding:host_id"] == ""
    # on a host whose ports never come up: fatal, back to offloaded, unbound again
    to_down = {"unshelve": {"host": HOST_DOWN}}
    assert cloud.api.post(act, to_down, version="2.91").status_code == 202
    failed = cloud.wait(sid)
    assert failed["status"] == "SHELVED_OFFLOADED"
    assert "fault" not in failed  # Nova shows a fault on ERROR servers only
    assert cloud.events(sid, "unshelve")["compute_unshelve_instance"] == "Error"
    assert sandbox.client.show("ports", port["id"])["binding:host_id"] == ""
    assert cloud.usage() == {}
    to_active = {"unshelve": {"host": HOST_ACTIVE}}
    assert cloud.api.post(act, to_active, version="2.91").status_code == 202
    assert cloud.wait(sid)["status"] == "ACTIVE"
    assert sandbox.client.show("ports", port["id"])["binding:host_id"] == HOST_ACTIVE
    _delete(cloud, sid)
    assert sandbox.ports() == []


# --- live migration with multiple port bindings (decision 0072) ---------------------------


class _BindingsSeen(FakeDriver):
    """Records the port's bindings in Neutron while the guest moves."""

    def __init__(self, box: Sandbox, host: str, **config: Any) -> None:
        node = f"{host}-{uuid.uuid4().hex[:8]}"
        super().__init__(FakeDriverConfig(nodes=(node,), **config), sleep=lambda _s: None)
        self.box = box
        self.seen: list[dict[str, str]] = []

    def live_migration(self, instance: Any, dest_host: str, on_progress: Any, *, block_migration: bool = False) -> None:  # fmt: skip
        for port in self.box.ports():
            self.seen.append(_bindings(self.box, port["id"]))
        super().live_migration(instance, dest_host, on_progress, block_migration=block_migration)


def _bindings(box: Sandbox, port_id: str) -> dict[str, str]:
    found = box.client._adapter.get(f"/v2.0/ports/{port_id}/bindings").json()["bindings"]
    return {b["host"]: b["status"] for b in found}


@dataclass
class _Live:
    cloud: Cloud
    source: _BindingsSeen
    sid: str
    after: dict[str, Any]  # the server once the live migration's every step finished


def _live_migrated(neutron_cloud: CloudFactory, box: Sandbox, dest: str, **config: Any) -> _Live:
    """A server booted on HOST_DOWN (the only host then), live-migrated to ``dest`` (2.68)."""
    cloud = neutron_cloud(vif_plugging_timeout=0)
    source = _BindingsSeen(box, HOST_DOWN, **config)
    cloud.add_compute(HOST_DOWN, driver=source)
    sid = _boot(cloud, box, box.private["id"])
    assert cloud.wait(sid)["OS-EXT-SRV-ATTR:host"] == HOST_DOWN
    cloud.add_compute(dest, driver=_BindingsSeen(box, dest))
    body = {"os-migrateLive": {"host": dest, "block_migration": "auto"}}
    resp = cloud.api.post(f"/v2.1/servers/{sid}/action", body, version="2.68", token="admin:admin")
    assert resp.status_code == 202, resp.text
    cloud.events(sid, "live-migration")
    return _Live(cloud, source, sid, _show(cloud, sid))


def test_live_migration_binds_the_destination_inactive_then_activates_it(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    live = _live_migrated(neutron_cloud, sandbox, HOST_ACTIVE)
    assert (live.after["status"], live.after["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", HOST_ACTIVE)
    # while the guest moved: the destination's binding was there, inactive
    assert live.source.seen == [{HOST_DOWN: "ACTIVE", HOST_ACTIVE: "INACTIVE"}]
    (port,) = sandbox.ports()
    assert (port["binding:host_id"], port["binding:vif_type"]) == (HOST_ACTIVE, "ovs")
    assert _bindings(sandbox, port["id"]) == {HOST_ACTIVE: "ACTIVE"}  # the source's deleted
    _delete(live.cloud, live.sid)
    assert sandbox.ports() == []


def test_a_destination_that_cannot_bind_fails_the_live_migration(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    live = _live_migrated(neutron_cloud, sandbox, HOST_FAIL)
    assert (live.after["status"], live.after["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", HOST_DOWN)
    assert live.source.seen == []  # the guest never moved
    (port,) = sandbox.ports()
    assert port["binding:host_id"] == HOST_DOWN
    assert _bindings(sandbox, port["id"]) == {HOST_DOWN: "ACTIVE"}
    migration = live.cloud.api.get(f"/v2.1/os-migrations?instance_uuid={live.sid}", version="2.80",
                                   token="admin:admin").json()["migrations"][0]  # fmt: skip
    assert migration["status"] == "error"
    _delete(live.cloud, live.sid)


def test_a_failed_live_migration_deletes_the_destinations_bindings(
    neutron_cloud: CloudFactory, sandbox: Sandbox
) -> None:
    failing = (InjectedFailure("live_migration"),)
    live = _live_migrated(neutron_cloud, sandbox, HOST_ACTIVE, failures=failing)
    assert (live.after["status"], live.after["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", HOST_DOWN)
    assert live.source.seen == [{HOST_DOWN: "ACTIVE", HOST_ACTIVE: "INACTIVE"}]  # made, then...
    (port,) = sandbox.ports()
    assert port["binding:host_id"] == HOST_DOWN
    assert _bindings(sandbox, port["id"]) == {HOST_DOWN: "ACTIVE"}  # ...deleted
    _delete(live.cloud, live.sid)
