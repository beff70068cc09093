"""Ports with a QoS minimum bandwidth policy across the roles (decision 0076): the embedded
network computes the port's resource request, the API puts its groups in the request spec,
the scheduler asks Placement for them (granular groups), the conductor maps them to the
bandwidth provider compute reports from ``[openkeel_network] bandwidth_inventories``, and the
port's ``binding:profile.allocation`` names it; exhausted bandwidth is NoValidHost, a delete
frees it, a cold migration moves it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.domain.resource_requests import NET_BW_EGR, NET_BW_IGR
from openkeel.network.embedded import qos
from openkeel.network.embedded.service import Caller, NetworkService
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from tests.conftest import make_services
from tests.functional.conftest import Cloud, start_cloud, stop_cloud

PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"
ADMIN = Caller("admin", True)
BANDWIDTH = 1000


@pytest.fixture
def cloud(tmp_path: Path, placement: EmbeddedPlacement) -> Iterator[Cloud]:
    """In process, each host reporting 1000 kbps each way on physnet ``public``."""
    services = make_services(tmp_path)
    services.conf.set_override(
        "bandwidth_inventories", [f"public:{BANDWIDTH}:{BANDWIDTH}"], group="openkeel_network"
    )
    built = start_cloud(services, placement, f"inproc://qos-{uuid.uuid4().hex[:8]}")
    built.add_compute()
    yield built
    stop_cloud(built)


def _network(cloud: Cloud) -> NetworkService:
    adapter = get_network_adapter(cloud.services.conf, cloud.services.api_db)
    assert isinstance(adapter, FlatNetwork)
    return adapter.service


def _qos_port(cloud: Cloud, kbps: int) -> dict[str, Any]:
    service = _network(cloud)
    policy = qos.create_policy(service, ADMIN, {"name": f"min-{kbps}", "project_id": "admin"})
    for direction in ("egress", "ingress"):
        qos.create_rule(service, ADMIN, policy["id"], "minimum_bandwidth",
                        {"min_kbps": kbps, "direction": direction})  # fmt: skip
    return qos.creating(NetworkService.create_port)(
        service,
        ADMIN,
        {"network_id": PRIVATE, "project_id": "admin", "qos_policy_id": policy["id"]},
    )


def _bandwidth_providers(cloud: Cloud) -> dict[str, str]:
    """Host -> its bandwidth provider."""
    found = {}
    for host, service in cloud.computes.items():
        (node,) = service.host.tracker.provider_uuids()
        children = [p for p in cloud.placement.list_providers(in_tree=node) if p.uuid != node]
        (child,) = children
        found[host] = child.uuid
    return found


def _boot_with(cloud: Cloud, port_id: str, name: str = "qos") -> dict[str, Any]:
    return cloud.wait(cloud.boot(name, networks=[{"port": port_id}])["id"])


def _profile(cloud: Cloud, port_id: str) -> dict[str, Any]:
    row = _network(cloud).store.get("ports", port_id)
    assert row is not None
    return dict(row["binding_profile"])


def test_boot_allocates_bandwidth_and_names_its_provider(cloud: Cloud) -> None:
    port = _qos_port(cloud, 600)
    request = qos.resource_request(_network(cloud), port)
    assert request is not None
    (group,) = request["request_groups"]
    assert group["required"] == ["CUSTOM_PHYSNET_PUBLIC", "CUSTOM_VNIC_TYPE_NORMAL"]
    server = _boot_with(cloud, port["id"])
    assert server["status"] == "ACTIVE", server
    (provider,) = _bandwidth_providers(cloud).values()
    assert cloud.placement.get_traits(provider) == {
        "CUSTOM_PHYSNET_PUBLIC",
        "CUSTOM_VNIC_TYPE_NORMAL",
    }
    allocations = cloud.placement.get_allocations(server["id"]).allocations
    assert allocations[provider] == {NET_BW_EGR: 600, NET_BW_IGR: 600}
    assert _profile(cloud, port["id"])["allocation"] == {group["id"]: provider}

    # A second port asking 600 more: the host has 400 left each way.
    other = _qos_port(cloud, 600)
    failed = _boot_with(cloud, other["id"], "no-room")
    assert failed["status"] == "ERROR"
    assert "No valid host was found" in failed["fault"]["message"]
    assert "allocation" not in _profile(cloud, other["id"])

    # The delete frees the bandwidth; the user's port stays, unbound.
    assert cloud.api.delete(f"/v2.1/servers/{server['id']}").status_code == 204
    cloud.wait(server["id"], gone=True)
    assert cloud.placement.get_provider_usages(provider) == {NET_BW_EGR: 0, NET_BW_IGR: 0}
    assert _profile(cloud, port["id"]) == {}
    assert _boot_with(cloud, other["id"], "now-fits")["status"] == "ACTIVE"


def test_cold_migration_moves_the_bandwidth(cloud: Cloud) -> None:
    cloud.add_compute()
    port = _qos_port(cloud, 700)
    server = _boot_with(cloud, port["id"])
    assert server["status"] == "ACTIVE", server
    providers = _bandwidth_providers(cloud)
    source = server["OS-EXT-SRV-ATTR:host"]
    (target,) = set(providers) - {source}
    (group,) = (qos.resource_request(_network(cloud), port) or {})["request_groups"]
    assert _profile(cloud, port["id"])["allocation"] == {group["id"]: providers[source]}

    resp = cloud.api.post(f"/v2.1/servers/{server['id']}/action", {"migrate": None})
    assert resp.status_code == 202, resp.text
    moved = cloud.wait(server["id"])
    assert (moved["status"], moved["OS-EXT-SRV-ATTR:host"]) == ("VERIFY_RESIZE", target)
    allocations = cloud.placement.get_allocations(server["id"]).allocations
    assert allocations[providers[target]] == {NET_BW_EGR: 700, NET_BW_IGR: 700}
    assert _profile(cloud, port["id"])["allocation"] == {group["id"]: providers[target]}

    resp = cloud.api.post(f"/v2.1/servers/{server['id']}/action", {"revertResize": None})
    assert resp.status_code == 202, resp.text
    reverted = cloud.wait(server["id"])
    assert (reverted["status"], reverted["OS-EXT-SRV-ATTR:host"]) == ("ACTIVE", source)
    assert _profile(cloud, port["id"])["allocation"] == {group["id"]: providers[source]}
    assert cloud.placement.get_provider_usages(providers[target]) == {NET_BW_EGR: 0, NET_BW_IGR: 0}


def test_interface_attach_claims_and_detach_gives_back(cloud: Cloud) -> None:
    server = cloud.wait(cloud.boot("attach", networks="auto")["id"])
    assert server["status"] == "ACTIVE", server
    (provider,) = _bandwidth_providers(cloud).values()
    port = _qos_port(cloud, 800)
    url = f"/v2.1/servers/{server['id']}/os-interface"
    resp = cloud.api.post(url, {"interfaceAttachment": {"port_id": port["id"]}})
    assert resp.status_code == 200, resp.text
    allocations = cloud.placement.get_allocations(server["id"]).allocations
    assert allocations[provider] == {NET_BW_EGR: 800, NET_BW_IGR: 800}
    (group,) = (qos.resource_request(_network(cloud), port) or {})["request_groups"]
    assert _profile(cloud, port["id"])["allocation"] == {group["id"]: provider}

    # No room for a second one: Nova's 400, nothing claimed, the port left alone.
    other = _qos_port(cloud, 800)
    refused = cloud.api.post(url, {"interfaceAttachment": {"port_id": other["id"]}})
    assert refused.status_code == 400, refused.text
    assert "Failed to allocate additional resources" in refused.json()["badRequest"]["message"]
    assert cloud.placement.get_provider_usages(provider)[NET_BW_EGR] == 800
    assert _profile(cloud, other["id"]) == {}

    assert cloud.api.delete(f"{url}/{port['id']}").status_code == 202
    deadline = time.monotonic() + 30
    while cloud.placement.get_provider_usages(provider)[NET_BW_EGR]:
        assert time.monotonic() < deadline, "the detach to give the bandwidth back"
        time.sleep(0.05)  # polling an RPC cast's effect, bounded by the deadline
    assert _profile(cloud, port["id"]) == {}
    assert (
        "VCPU"
        in cloud.placement.get_allocations(server["id"]).allocations[
            cloud.computes[server["OS-EXT-SRV-ATTR:host"]].host.tracker.provider_uuids()[0]
        ]
    )
