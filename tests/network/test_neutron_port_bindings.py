"""Multiple port bindings (Neutron's ``binding-extended``) on the Neutron adapter against the
real neutron-server (scripts/start-neutron.sh): an inactive binding on a live migration's
destination, activated once the guest moved, the source's deleted after; a destination that
cannot bind fails with Nova's PortBindingFailed and leaves no binding behind (decision 0072).

Host names pick what Neutron's test mechanism driver does (decision 0056): the source binds
DOWN, the destination ACTIVE; ``host-fail`` and any other name are not bound."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from openkeel.network import errors
from openkeel.network.adapter import InstanceNetRef, RequestedNetwork
from openkeel.network.neutron import NeutronNetwork
from tests.network.neutron_server import HOST_ACTIVE, HOST_DOWN, HOST_FAIL, Sandbox, neutron_conf
from tests.network.neutron_server import neutron_project as neutron_project
from tests.network.neutron_server import sandbox as sandbox


@pytest.fixture
def net(sandbox: Sandbox) -> NeutronNetwork:
    """The adapter on the test's own client (closed by the sandbox)."""
    return NeutronNetwork(neutron_conf(), client=sandbox.client)


def _bindings(box: Sandbox, port_id: str) -> dict[str, dict[str, Any]]:
    found = box.client._adapter.get(f"/v2.0/ports/{port_id}/bindings").json()["bindings"]
    return {b["host"]: b for b in found}


def _server(box: Sandbox, net: NeutronNetwork, *more: str) -> tuple[InstanceNetRef, list[str]]:
    server = InstanceNetRef(str(uuid.uuid4()), box.project_id, HOST_DOWN, ())
    wanted = [RequestedNetwork(network_id=n) for n in (box.private["id"], *more)]
    info = net.allocate_for_instance(server, wanted)
    return server, [vif["id"] for vif in info]


def test_neutron_has_the_extension(net: NeutronNetwork) -> None:
    assert net.has_port_binding_extension()


def test_bind_activate_and_delete_as_a_live_migration(sandbox: Sandbox, net: NeutronNetwork) -> None:  # fmt: skip
    server, (port_id,) = _server(sandbox, net)
    made = net.bind_ports_to_host(server, HOST_ACTIVE)
    assert made is not None and set(made) == {port_id}
    assert made[port_id]["status"] == "INACTIVE" and made[port_id]["vif_type"] == "ovs"
    bindings = _bindings(sandbox, port_id)
    assert {h: b["status"] for h, b in bindings.items()} == {HOST_DOWN: "ACTIVE", HOST_ACTIVE: "INACTIVE"}  # fmt: skip
    # the port itself still lives on the source
    assert sandbox.client.show("ports", port_id)["binding:host_id"] == HOST_DOWN

    net.activate_port_bindings(server, HOST_ACTIVE)
    port = sandbox.client.show("ports", port_id)
    assert (port["binding:host_id"], port["binding:vif_type"]) == (HOST_ACTIVE, "ovs")
    bindings = _bindings(sandbox, port_id)
    assert {h: b["status"] for h, b in bindings.items()} == {HOST_DOWN: "INACTIVE", HOST_ACTIVE: "ACTIVE"}  # fmt: skip
    net.activate_port_bindings(server, HOST_ACTIVE)  # already active: nothing to do

    net.delete_port_bindings(server, HOST_DOWN)  # the destination drops the source's
    assert set(_bindings(sandbox, port_id)) == {HOST_ACTIVE}
    net.delete_port_bindings(server, HOST_DOWN)  # none left there: nothing to do
    moved = InstanceNetRef(server.uuid, server.project_id, HOST_ACTIVE, ())
    (vif,) = net.get_instance_nw_info(moved)
    assert vif["type"] == "ovs" and vif["details"]["port_filter"] is True


def test_a_rolled_back_migration_deletes_the_destinations(sandbox: Sandbox, net: NeutronNetwork) -> None:  # fmt: skip
    server, (port_id,) = _server(sandbox, net)
    net.bind_ports_to_host(server, HOST_ACTIVE)
    net.delete_port_bindings(server, HOST_ACTIVE)
    assert {h: b["status"] for h, b in _bindings(sandbox, port_id).items()} == {HOST_DOWN: "ACTIVE"}  # fmt: skip
    port = sandbox.client.show("ports", port_id)
    assert (port["binding:host_id"], port["binding:vif_type"]) == (HOST_DOWN, "ovs")
    # nothing bound on a host: activation has nothing to do
    net.activate_port_bindings(server, HOST_ACTIVE)
    assert sandbox.client.show("ports", port_id)["binding:host_id"] == HOST_DOWN


@pytest.mark.parametrize("dest", [HOST_FAIL, "no-such-host"])
def test_a_destination_that_cannot_bind_leaves_nothing(sandbox: Sandbox, net: NeutronNetwork, dest: str) -> None:  # fmt: skip
    # two ports: the second one's failure takes the first one's binding back
    second = sandbox.network("second", cidr="10.21.0.0/24")
    server, ports = _server(sandbox, net, second["id"])
    with pytest.raises(errors.PortBindingFailed, match=r"^Binding failed for port .*, please check neutron logs"):  # fmt: skip
        net.bind_ports_to_host(server, dest)
    for port_id in ports:
        assert set(_bindings(sandbox, port_id)) == {HOST_DOWN}


def test_a_server_without_ports_binds_nothing(sandbox: Sandbox, net: NeutronNetwork) -> None:
    server = InstanceNetRef(str(uuid.uuid4()), sandbox.project_id, HOST_DOWN, ())
    assert net.bind_ports_to_host(server, HOST_ACTIVE) == {}
    net.activate_port_bindings(server, HOST_ACTIVE)
    net.delete_port_bindings(server, HOST_ACTIVE)
