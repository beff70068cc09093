"""The Neutron adapter against the real neutron-server (scripts/start-neutron.sh): validation
errors as Nova answers them, ports created and bound for a server, network_info from Neutron,
user ports unbound and compute's ports deleted, re-binding, security groups."""

from __future__ import annotations

import uuid

import pytest

from openkeel.network import errors, get_network_adapter
from openkeel.network.adapter import InstanceNetRef, RequestedNetwork
from openkeel.network.neutron import NeutronNetwork
from openkeel.network.neutron_client import NeutronFault
from tests.network.neutron_server import (
    HOST_ACTIVE,
    HOST_DOWN,
    HOST_FAIL,
    Sandbox,
    neutron_conf,
    neutron_project,
    sandbox,
)

__all__ = ["neutron_project", "sandbox"]


@pytest.fixture
def net(sandbox: Sandbox) -> NeutronNetwork:
    return NeutronNetwork(neutron_conf(), client=sandbox.client)


def _server(
    box: Sandbox, host: str | None = HOST_DOWN, groups: tuple[str, ...] = ()
) -> InstanceNetRef:
    return InstanceNetRef(str(uuid.uuid4()), box.project_id, host, groups)


def test_factory_makes_the_neutron_adapter(sandbox: Sandbox) -> None:
    from openkeel.db.engine import make_engine

    engine = make_engine("sqlite://")
    made = get_network_adapter(neutron_conf(), engine)
    assert isinstance(made, NeutronNetwork)
    made.close()
    engine.dispose()


def test_boot_validation_errors_are_novas(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    bare = sandbox.network("bare", cidr=None)
    other = Sandbox(sandbox.client)
    theirs = other.network("theirs")
    try:
        pid = sandbox.project_id
        with pytest.raises(errors.NetworkNotFound):
            net.validate_networks([RequestedNetwork(network_id=str(uuid.uuid4()))], 1, pid)
        with pytest.raises(errors.NetworkNotFound):
            net.validate_networks([RequestedNetwork(network_id=theirs["id"])], 1, pid)
        with pytest.raises(errors.NetworkRequiresSubnet):
            net.validate_networks([RequestedNetwork(network_id=bare["id"])], 1, pid)
        with pytest.raises(errors.FixedIpNotInNetwork):
            net.validate_networks([RequestedNetwork(network_id=mine["id"], address="10.99.0.5")], 1, pid)  # fmt: skip
        with pytest.raises(errors.InvalidFixedIp):
            net.validate_networks([RequestedNetwork(network_id=mine["id"], address="nope")], 1, pid)  # fmt: skip
        with pytest.raises(errors.InvalidFixedIpAndMaxCountRequest):
            net.validate_networks([RequestedNetwork(network_id=mine["id"], address="10.20.0.9")], 2, pid)  # fmt: skip
        used = sandbox.port(mine["id"], fixed_ips=[{"ip_address": "10.20.0.10"}], device_id="vm-x")
        with pytest.raises(
            errors.FixedIpAlreadyInUse, match=r"10\.20\.0\.10 is already in use on instance vm-x"
        ):
            net.validate_networks([RequestedNetwork(network_id=mine["id"], address="10.20.0.10")], 1, pid)  # fmt: skip
        with pytest.raises(errors.PortInUse):
            net.validate_networks([RequestedNetwork(port_id=used["id"])], 1, pid)
        with pytest.raises(errors.PortNotFound):
            net.validate_networks([RequestedNetwork(port_id=str(uuid.uuid4()))], 1, pid)
        their_port = other.port(theirs["id"])
        with pytest.raises(errors.PortNotFound):
            net.validate_networks([RequestedNetwork(port_id=their_port["id"])], 1, pid)
        free = sandbox.port(mine["id"])
        with pytest.raises(errors.MultiplePortsNotApplicable):
            net.validate_networks([RequestedNetwork(port_id=free["id"])], 2, pid)
        # nothing asked and two networks of the project: ambiguous
        with pytest.raises(errors.NetworkAmbiguous):
            net.validate_networks([], 1, pid)
        assert net.validate_networks([RequestedNetwork(network_id="none")], 5, pid) == 5
        assert net.validate_networks([RequestedNetwork(network_id=mine["id"])], 3, pid) == 3
    finally:
        other.cleanup()


def test_port_quota_limits_the_count(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    adapter = sandbox.client._adapter  # the test's own admin session, to set the quota
    adapter.put(f"/v2.0/quotas/{sandbox.project_id}", json={"quota": {"port": 3}})
    try:
        sandbox.port(mine["id"])
        # 3 ports allowed, 1 used: 2 of 5 servers with one port each
        assert net.validate_networks([RequestedNetwork(network_id=mine["id"])], 5, sandbox.project_id) == 2  # fmt: skip
    finally:
        adapter.delete(f"/v2.0/quotas/{sandbox.project_id}")


def test_allocate_creates_bound_ports_and_deallocate_deletes_them(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    mine = sandbox.private
    server = _server(sandbox)
    info = net.allocate_for_instance(server, [RequestedNetwork(network_id=mine["id"], address="10.20.0.7")])  # fmt: skip
    (vif,) = info
    port = sandbox.client.show("ports", vif["id"])
    assert port["device_id"] == server.uuid
    assert port["device_owner"] == "compute:nova"
    assert port["binding:host_id"] == HOST_DOWN
    assert port["binding:vif_type"] == "ovs"
    assert vif["type"] == "ovs" and vif["active"] is False
    assert vif["ovs_interfaceid"] == port["id"] and vif["network"]["bridge"] == "br-int"
    assert vif["address"] == port["mac_address"]
    assert vif["network"]["label"] == "private"
    (subnet,) = vif["network"]["subnets"]
    assert subnet["cidr"] == "10.20.0.0/24"
    assert subnet["ips"][0]["address"] == "10.20.0.7"
    assert subnet["gateway"]["address"] == "10.20.0.1"
    assert vif["preserve_on_delete"] is False
    # idempotent
    assert [v["id"] for v in net.allocate_for_instance(server, [RequestedNetwork(network_id=mine["id"])])] == [vif["id"]]  # fmt: skip
    (again,) = net.get_instance_nw_info(server)
    assert (again["id"], again["network"], again["type"]) == (vif["id"], vif["network"], "ovs")
    net.deallocate_for_instance(server)
    assert sandbox.ports() == []


def test_a_user_port_is_bound_then_only_unbound(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    given = sandbox.port(mine["id"])
    server = _server(sandbox, HOST_ACTIVE)
    (vif,) = net.allocate_for_instance(server, [RequestedNetwork(port_id=given["id"])])
    assert vif["id"] == given["id"] and vif["active"] is True
    assert vif["preserve_on_delete"] is True
    net.deallocate_for_instance(server)
    (left,) = sandbox.ports()
    assert left["id"] == given["id"]
    assert (left["device_id"], left["device_owner"], left["binding:host_id"]) == ("", "", "")


def test_a_port_no_driver_binds_fails_and_leaves_nothing(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    mine = sandbox.private
    with pytest.raises(errors.PortBindingFailed, match="Binding failed for port"):
        net.allocate_for_instance(_server(sandbox, HOST_FAIL), [RequestedNetwork(network_id=mine["id"])])  # fmt: skip
    assert sandbox.ports() == []


def test_a_boot_without_networks_uses_the_only_one(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    server = _server(sandbox)
    (vif,) = net.allocate_for_instance(server, [])
    assert vif["network"]["id"] == mine["id"]
    assert net.allocate_for_instance(_server(sandbox), [RequestedNetwork(network_id="none")]) == []


def test_ports_follow_the_server_to_its_new_host(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    server = _server(sandbox)
    (vif,) = net.allocate_for_instance(server, [RequestedNetwork(network_id=mine["id"])])
    assert vif["active"] is False
    moved = InstanceNetRef(server.uuid, server.project_id, HOST_ACTIVE)
    (vif,) = net.bind_to_host(moved)
    assert sandbox.client.show("ports", vif["id"])["binding:host_id"] == HOST_ACTIVE
    offloaded = InstanceNetRef(server.uuid, server.project_id, None)
    (vif,) = net.bind_to_host(offloaded)
    assert sandbox.client.show("ports", vif["id"])["binding:host_id"] == ""
    with pytest.raises(errors.PortBindingFailed):
        net.bind_to_host(InstanceNetRef(server.uuid, server.project_id, HOST_FAIL))


def test_security_groups_of_a_server(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    web = sandbox.client.create("security-groups", {"name": "web", "project_id": sandbox.project_id})  # fmt: skip
    with pytest.raises(errors.SecurityGroupNotFound):
        net.find_security_group(sandbox.project_id, "nope")
    assert net.find_security_group(sandbox.project_id, "web") == web["id"]
    server = _server(sandbox, groups=("web",))
    (vif,) = net.allocate_for_instance(server, [RequestedNetwork(network_id=mine["id"])])
    assert sandbox.client.show("ports", vif["id"])["security_groups"] == [web["id"]]
    assert [g["name"] for g in net.instance_security_groups(server.uuid)] == ["web"]
    net.add_security_group(server.uuid, sandbox.project_id, "default")
    assert sorted(g["name"] for g in net.instance_security_groups(server.uuid)) == ["default", "web"]  # fmt: skip
    # what a driver enforcing the groups is handed (decision 0077): Neutron's own rules
    found = net.port_security_groups(server.uuid)
    default = next(g for g in found["groups"].values() if g["name"] == "default")
    assert {p: sorted(ids) for p, ids in found["ports"].items()} == {vif["id"]: sorted([web["id"], default["id"]])}  # fmt: skip
    assert {r["direction"] for r in found["groups"][web["id"]]["security_group_rules"]} == {
        "egress"
    }
    assert {r["remote_group_id"] for r in default["security_group_rules"] if r["direction"] == "ingress"} == {default["id"]}  # fmt: skip
    # the servers in a group: Neutron's port filter by security group
    assert net.security_group_members(default["id"]) == [server.uuid]
    net.remove_security_group(server.uuid, sandbox.project_id, "web")
    assert net.security_group_members(web["id"]) == []
    with pytest.raises(errors.InstanceSecurityGroupNotFound):
        net.remove_security_group(server.uuid, sandbox.project_id, "web")
    net.deallocate_for_instance(server)


def test_networks_and_interfaces(sandbox: Sandbox, net: NeutronNetwork) -> None:
    mine = sandbox.private
    assert {"id": mine["id"], "name": "private"} in net.list_networks(sandbox.project_id)
    assert net.get_network(sandbox.project_id, mine["id"]) == {"id": mine["id"], "name": "private"}
    with pytest.raises(errors.NetworkNotFound):
        net.get_network("someone-else", mine["id"])
    server = _server(sandbox)
    vif = net.attach_port(server, RequestedNetwork(network_id=mine["id"]))
    assert [p["id"] for p in net.instance_ports(server.uuid)] == [vif["id"]]
    assert net.show_port(vif["id"])["device_id"] == server.uuid
    net.release_port(server, vif["id"])
    assert sandbox.ports() == []


def test_client_reports_neutron_faults(sandbox: Sandbox, net: NeutronNetwork) -> None:
    seen = None
    try:
        net.client.show("networks", str(uuid.uuid4()))
    except NeutronFault as fault:
        seen = (fault.status, fault.kind)
    assert seen == (404, "NetworkNotFound")


def test_a_port_takes_the_addresses_the_guest_has(sandbox: Sandbox, net: NeutronNetwork) -> None:
    port = sandbox.port(sandbox.private["id"])
    net.set_port_addresses(port["id"], ["10.20.0.77"])
    assert [f["ip_address"] for f in sandbox.client.show("ports", port["id"])["fixed_ips"]] == ["10.20.0.77"]  # fmt: skip
    with pytest.raises(errors.NetworkError, match=r"cannot take 10\.99\.0\.1"):
        net.set_port_addresses(port["id"], ["10.99.0.1"])
    with pytest.raises(errors.PortNotFound):
        net.set_port_addresses(str(uuid.uuid4()), ["10.20.0.78"])
