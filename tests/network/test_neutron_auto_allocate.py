"""2.37's ``networks: auto`` on the Neutron adapter against the real neutron-server
(scripts/start-neutron.sh, with Neutron's auto_allocate plugin): a project with no network
gets Neutron's auto-allocated topology, checked with a dry run at the API and made in compute;
Nova's 400 when Neutron cannot make it (decision 0064)."""

from __future__ import annotations

import uuid

import pytest

from openkeel.network import errors
from openkeel.network.adapter import InstanceNetRef, RequestedNetwork
from openkeel.network.neutron import NeutronNetwork
from tests.network.neutron_server import (
    HOST_ACTIVE,
    AutoAllocation,
    Sandbox,
    auto_allocation,
    neutron_conf,
    new_client,
)

__all__ = ["auto_allocation"]

AUTO = [RequestedNetwork(network_id="auto")]


# Neutron has one default external network and one default subnet pool per deployment, and a
# shared network made by a test running beside (tests/e2e/test_neutron_proxies_cli.py makes
# one) would serve `auto` instead: the tests that set them run alone (scripts/test.sh's serial
# phase).
@pytest.mark.serial
def test_auto_gets_the_projects_auto_allocated_topology(auto_allocation: AutoAllocation) -> None:
    client = new_client()
    net = NeutronNetwork(neutron_conf(), client=client)
    project = uuid.uuid4().hex
    box = Sandbox(client, project)
    try:
        # Neutron's requirements unmet (no default external network): Nova's 400
        with pytest.raises(errors.UnableToAutoAllocateNetwork, match=f"for project {project}$"):
            net.validate_networks(AUTO, 1, project)
        server = InstanceNetRef(str(uuid.uuid4()), project, HOST_ACTIVE)
        with pytest.raises(errors.UnableToAutoAllocateNetwork):
            net.allocate_for_instance(server, AUTO)
        # nothing asked (not auto) and nothing available: no network, as Nova
        assert net.validate_networks([], 1, project) == 1
        assert net.allocate_for_instance(server, []) == []

        auto_allocation.require(client, True)
        # the API's dry run: allowed, nothing made yet
        assert net.validate_networks(AUTO, 3, project) == 3
        assert client.list("networks", {"project_id": project}) == []
        (vif,) = net.allocate_for_instance(server, AUTO)
        (made,) = client.list("networks", {"project_id": project})
        assert vif["network"]["id"] == made["id"]
        assert vif["network"]["label"] == made["name"]
        (subnet,) = vif["network"]["subnets"]
        assert subnet["cidr"].startswith("10.128.")
        (router,) = client.list("routers", {"project_id": project})
        assert router["external_gateway_info"]["network_id"] == auto_allocation.external["id"]
        # the next server of the project: the same network (now the one available)
        other = InstanceNetRef(str(uuid.uuid4()), project, HOST_ACTIVE)
        assert net.validate_networks(AUTO, 1, project) == 1
        (again,) = net.allocate_for_instance(other, AUTO)
        assert again["network"]["id"] == made["id"]
        net.deallocate_for_instance(server)
        net.deallocate_for_instance(other)
    finally:
        auto_allocation.require(client, False)
        auto_allocation.forget(client, project)
        box.cleanup()
        client.close()
