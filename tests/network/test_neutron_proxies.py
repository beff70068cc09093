"""The Neutron adapter's side of Nova's network proxies against the real neutron-server
(scripts/start-neutron.sh): security groups and rules, floating IP pools and floating IPs,
their association with a server's port, and fixed IPs added to and removed from a server's
port, each as the ``Requester``'s project sees it and with Nova's errors (decision 0064)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from openkeel.network import errors
from openkeel.network.adapter import IngressRule, InstanceNetRef, RequestedNetwork, Requester
from openkeel.network.neutron import NeutronNetwork
from openkeel.network.neutron_client import NeutronFault
from tests.network.neutron_server import (
    HOST_ACTIVE,
    POOL,
    Outside,
    Sandbox,
    neutron_conf,
    neutron_project,
    outside,
    sandbox,
)

__all__ = ["neutron_project", "outside", "sandbox"]


@pytest.fixture
def net(sandbox: Sandbox, outside: Outside) -> Iterator[NeutronNetwork]:
    adapter = NeutronNetwork(neutron_conf(**{"neutron.default_floating_pool": POOL}),
                             client=sandbox.client)  # fmt: skip
    yield adapter
    for fip in sandbox.client.list("floatingips", {"project_id": sandbox.project_id}):
        sandbox.client.delete("floatingips", fip["id"])


def _me(box: Sandbox) -> Requester:
    return Requester(box.project_id)


def _server(box: Sandbox, net: NeutronNetwork) -> InstanceNetRef:
    server = InstanceNetRef(str(uuid.uuid4()), box.project_id, HOST_ACTIVE)
    net.allocate_for_instance(server, [RequestedNetwork(network_id=box.private["id"])])
    return server


def _addresses(info: list[dict[str, Any]]) -> list[str]:
    return sorted(ip["address"] for vif in info for s in vif["network"]["subnets"] for ip in s["ips"])  # fmt: skip


# --- security groups ---------------------------------------------------------------------------


def test_security_groups_in_novas_form_as_the_project_sees_them(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    me, stranger, admin = _me(sandbox), Requester(uuid.uuid4().hex), Requester("admin", True)
    web = net.create_security_group(me, "web", "the web tier")
    assert (web["name"], web["description"], web["project_id"]) == ("web", "the web tier", sandbox.project_id)  # fmt: skip
    # Neutron's default egress rules are not Nova's: no rules
    assert web["rules"] == []
    assert sandbox.client.show("security-groups", web["id"])["project_id"] == sandbox.project_id
    mine = net.list_security_groups(me, all_projects=False)
    # the project's default group is there (Neutron makes it on the first look), with the
    # ingress rules from its own members
    assert sorted(g["name"] for g in mine) == ["default", "web"]
    (default,) = [g for g in mine if g["name"] == "default"]
    assert {
        (r["group_id"], r["cidr"], r["protocol"], r["from_port"]) for r in default["rules"]
    } == {(default["id"], "0.0.0.0/0", None, None)}
    # not another project's, even asking for all; an admin sees every project's
    theirs = net.list_security_groups(stranger, all_projects=True)
    for group in theirs:  # Neutron made the stranger's default group on the way
        sandbox.client.delete("security-groups", group["id"])
    assert [(g["name"], g["project_id"]) for g in theirs] == [("default", stranger.project_id)]
    assert web["id"] in {g["id"] for g in net.list_security_groups(admin, all_projects=True)}
    assert web["id"] not in {g["id"] for g in net.list_security_groups(admin, all_projects=False)}
    assert net.get_security_group(me, web["id"]) == web
    assert net.get_security_group(admin, web["id"]) == web
    with pytest.raises(errors.SecurityGroupMissing, match=f"Security group {web['id']} does not exist"):  # fmt: skip
        net.get_security_group(stranger, web["id"])
    with pytest.raises(errors.SecurityGroupMissing):
        net.get_security_group(me, str(uuid.uuid4()))

    renamed = net.update_security_group(me, web["id"], "www", "renamed")
    assert (renamed["name"], renamed["description"]) == ("www", "renamed")
    with pytest.raises(errors.SecurityGroupMissing):
        net.update_security_group(stranger, web["id"], "x", "y")
    with pytest.raises(errors.SecurityGroupInvalid):  # Neutron's 409 on renaming default
        net.update_security_group(me, default["id"], "not-default", "")
    with pytest.raises(errors.SecurityGroupLimitExceeded):  # Neutron's 409: a second default
        net.create_security_group(me, "default", "again")

    with pytest.raises(errors.SecurityGroupMissing):
        net.delete_security_group(stranger, web["id"])
    port = sandbox.port(sandbox.private["id"], security_groups=[web["id"]])
    with pytest.raises(errors.SecurityGroupInvalid, match="in use"):
        net.delete_security_group(me, web["id"])
    sandbox.client.delete("ports", port["id"])
    net.delete_security_group(me, web["id"])
    with pytest.raises(errors.SecurityGroupMissing):
        net.delete_security_group(me, web["id"])


def test_a_projects_default_group_is_not_its_to_delete(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    """Neutron refuses a project's token the ``default`` group (Nova's 400); the adapter's own
    token is an admin's, which Neutron would let delete it (tempest's
    test_delete_the_default_security_group)."""
    me = _me(sandbox)
    default = next(g for g in net.list_security_groups(me, all_projects=False) if g["name"] == "default")  # fmt: skip
    with pytest.raises(errors.SecurityGroupInvalid, match="removing default security group"):
        net.delete_security_group(me, default["id"])
    assert sandbox.client.show("security-groups", default["id"])["name"] == "default"


def test_rules_in_novas_form(sandbox: Sandbox, net: NeutronNetwork) -> None:
    me, stranger = _me(sandbox), Requester(uuid.uuid4().hex)
    web = net.create_security_group(me, "web", "")
    app = net.create_security_group(me, "app", "")
    ssh = net.create_security_group_rule(me, IngressRule(web["id"], "tcp", 22, 22, "10.0.0.0/8"))
    assert {k: v for k, v in ssh.items() if k != "id"} == {
        "parent_group_id": web["id"], "protocol": "tcp", "from_port": 22, "to_port": 22,
        "group_id": None, "cidr": "10.0.0.0/8"}  # fmt: skip
    made = sandbox.client.show("security-group-rules", ssh["id"])
    assert (made["direction"], made["ethertype"], made["project_id"]) == ("ingress", "IPv4", sandbox.project_id)  # fmt: skip
    # ICMP any type/code (-1: no port in Neutron); IPv6 CIDR: an IPv6 rule
    ping = net.create_security_group_rule(me, IngressRule(web["id"], "icmp", -1, -1, "::/0"))
    assert (ping["from_port"], ping["to_port"], ping["cidr"]) == (-1, -1, "::/0")
    assert sandbox.client.show("security-group-rules", ping["id"])["ethertype"] == "IPv6"
    # from a group, whole TCP range
    peers = net.create_security_group_rule(me, IngressRule(web["id"], "tcp", 1, 65535, None, app["id"]))  # fmt: skip
    assert (peers["group_id"], peers["cidr"], peers["from_port"], peers["to_port"]) == (app["id"], "0.0.0.0/0", 1, 65535)  # fmt: skip
    assert sorted(r["id"] for r in net.get_security_group(me, web["id"])["rules"]) == sorted([ssh["id"], ping["id"], peers["id"]])  # fmt: skip
    assert net.get_security_group_rule(me, ssh["id"]) == ssh

    with pytest.raises(errors.SecurityGroupLimitExceeded):  # Neutron's 409: the same rule
        net.create_security_group_rule(me, IngressRule(web["id"], "tcp", 22, 22, "10.0.0.0/8"))
    with pytest.raises(errors.SecurityGroupInvalid):  # Neutron's 400: a CIDR and a group
        net.create_security_group_rule(me, IngressRule(web["id"], "udp", 53, 53, "10.0.0.0/8", app["id"]))  # fmt: skip
    with pytest.raises(errors.SecurityGroupMissing):
        net.create_security_group_rule(stranger, IngressRule(web["id"], "tcp", 80, 80, "0.0.0.0/0"))  # fmt: skip
    with pytest.raises(errors.SecurityGroupMissing):
        net.create_security_group_rule(me, IngressRule(str(uuid.uuid4()), "tcp", 80, 80, "0.0.0.0/0"))  # fmt: skip
    with pytest.raises(errors.SecurityGroupMissing):
        net.get_security_group_rule(stranger, ssh["id"])
    with pytest.raises(errors.SecurityGroupMissing):
        net.delete_security_group_rule(stranger, ssh["id"])

    net.delete_security_group_rule(me, ssh["id"])
    with pytest.raises(errors.SecurityGroupMissing):
        net.get_security_group_rule(me, ssh["id"])
    with pytest.raises(errors.SecurityGroupMissing):
        net.delete_security_group_rule(me, ssh["id"])
    assert sorted(r["id"] for r in net.get_security_group(me, web["id"])["rules"]) == sorted([ping["id"], peers["id"]])  # fmt: skip


# --- floating IPs ------------------------------------------------------------------------------


def test_pools_are_the_external_networks(
    sandbox: Sandbox, net: NeutronNetwork, outside: Outside
) -> None:
    pools = net.list_floating_ip_pools(_me(sandbox))
    assert {"id": outside.public["id"], "name": POOL} in pools
    assert {"id": outside.tiny["id"], "name": f"{POOL}-tiny"} in pools
    assert sandbox.private["id"] not in {p["id"] for p in pools}


def test_floating_ips_allocated_listed_and_released(
    sandbox: Sandbox, net: NeutronNetwork, outside: Outside
) -> None:
    me, stranger, admin = _me(sandbox), Requester(uuid.uuid4().hex), Requester("admin", True)
    first = net.allocate_floating_ip(me, None)  # the default pool
    assert first["pool"] == POOL and first["floating_network_id"] == outside.public["id"]
    assert (first["instance_id"], first["port_id"], first["fixed_ip_address"]) == (None, None, None)
    assert first["floating_ip_address"].startswith("172.24.40.")
    assert sandbox.client.show("floatingips", first["id"])["project_id"] == sandbox.project_id
    second = net.allocate_floating_ip(me, outside.public["id"])  # a pool by id
    assert second["pool"] == POOL
    assert sorted(f["id"] for f in net.list_floating_ips(me)) == sorted([first["id"], second["id"]])  # fmt: skip
    assert net.list_floating_ips(stranger) == []

    assert net.get_floating_ip(me, first["id"]) == first
    assert net.get_floating_ip(admin, first["id"]) == first
    with pytest.raises(errors.FloatingIpNotFound):
        net.get_floating_ip(stranger, first["id"])
    with pytest.raises(errors.FloatingIpNotFound):
        net.get_floating_ip(me, str(uuid.uuid4()))
    address = first["floating_ip_address"]
    assert net.get_floating_ip_by_address(me, address) == first
    assert net.get_floating_ip_by_address(admin, address) == first
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.get_floating_ip_by_address(stranger, address)
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.release_floating_ip(stranger, address)

    net.release_floating_ip(me, address)
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.get_floating_ip_by_address(me, address)
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.release_floating_ip(me, address)
    assert [f["id"] for f in net.list_floating_ips(me)] == [second["id"]]


def test_allocation_errors_are_novas(
    sandbox: Sandbox, net: NeutronNetwork, outside: Outside
) -> None:
    me = _me(sandbox)
    with pytest.raises(errors.FloatingIpPoolNotFound):
        net.allocate_floating_ip(me, "no-such-pool")
    with pytest.raises(errors.FloatingIpPoolNotFound):  # a network, but not an external one
        net.allocate_floating_ip(me, sandbox.private["id"])
    net.allocate_floating_ip(me, f"{POOL}-tiny")  # its only address
    with pytest.raises(errors.NoMoreFloatingIps):
        net.allocate_floating_ip(me, f"{POOL}-tiny")
    http = sandbox.client._adapter  # the admin session, to set the quota
    http.put(f"/v2.0/quotas/{sandbox.project_id}", json={"quota": {"floatingip": 1}})
    try:
        with pytest.raises(errors.FloatingIpLimitExceeded):
            net.allocate_floating_ip(me, POOL)
    finally:
        http.delete(f"/v2.0/quotas/{sandbox.project_id}")


def test_associate_with_the_port_of_the_fixed_address_and_disassociate(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    me = _me(sandbox)
    one, two = _server(sandbox, net), _server(sandbox, net)
    (fixed_one,) = _addresses(net.get_instance_nw_info(one))
    (fixed_two,) = _addresses(net.get_instance_nw_info(two))
    fip = net.allocate_floating_ip(me, None)
    address = fip["floating_ip_address"]
    with pytest.raises(errors.FixedIpNotFoundForInstance):
        net.associate_floating_ip(me, one.uuid, address, "10.20.0.250")
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.associate_floating_ip(me, one.uuid, "172.24.40.250", fixed_one)

    net.associate_floating_ip(me, one.uuid, address, fixed_one)
    (port_one,) = sandbox.client.list("ports", {"device_id": one.uuid})
    seen = net.get_floating_ip_by_address(me, address)
    assert (seen["port_id"], seen["fixed_ip_address"], seen["instance_id"]) == (port_one["id"], fixed_one, one.uuid)  # fmt: skip
    (vif,) = net.get_instance_nw_info(one)
    assert vif["network"]["subnets"][0]["ips"][0]["floating_ips"][0]["address"] == address
    # a second floating IP for the same fixed address: Neutron's 409
    other = net.allocate_floating_ip(me, None)
    with pytest.raises(errors.FloatingIpAssociateFailed):
        net.associate_floating_ip(me, one.uuid, other["floating_ip_address"], fixed_one)
    # taken from the first server to the second
    net.associate_floating_ip(me, two.uuid, address, fixed_two)
    assert net.get_floating_ip_by_address(me, address)["instance_id"] == two.uuid
    (vif,) = net.get_instance_nw_info(one)
    assert vif["network"]["subnets"][0]["ips"][0]["floating_ips"] == []

    net.disassociate_floating_ip(me, address)
    seen = net.get_floating_ip_by_address(me, address)
    assert (seen["port_id"], seen["fixed_ip_address"], seen["instance_id"]) == (None, None, None)
    with pytest.raises(errors.FloatingIpNotFoundForAddress):
        net.disassociate_floating_ip(Requester(uuid.uuid4().hex), address)
    # released while associated (os-floating-ips' delete): gone with its association
    net.associate_floating_ip(me, two.uuid, address, fixed_two)
    net.release_floating_ip(me, address)
    assert sandbox.client.list("floatingips", {"floating_ip_address": address}) == []
    net.deallocate_for_instance(one)
    net.deallocate_for_instance(two)


def test_an_association_neutron_cannot_route_is_its_error(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    """No router from the port's subnet to the pool: Neutron's 404, which Nova's action turns
    into its generic 400 (the use case does)."""
    isolated = sandbox.network("isolated", cidr="10.21.0.0/24")
    server = InstanceNetRef(str(uuid.uuid4()), sandbox.project_id, HOST_ACTIVE)
    (vif,) = net.allocate_for_instance(server, [RequestedNetwork(network_id=isolated["id"])])
    fip = net.allocate_floating_ip(_me(sandbox), None)
    with pytest.raises(NeutronFault) as caught:
        net.associate_floating_ip(_me(sandbox), server.uuid, fip["floating_ip_address"], _addresses([vif])[0])  # fmt: skip
    assert caught.value.status == 404
    net.deallocate_for_instance(server)


# --- fixed IPs ---------------------------------------------------------------------------------


def test_add_and_remove_a_fixed_ip_on_the_servers_port(
    sandbox: Sandbox, net: NeutronNetwork
) -> None:
    server = _server(sandbox, net)
    (first,) = _addresses(net.get_instance_nw_info(server))
    info = net.add_fixed_ip(server, sandbox.private["id"])
    (vif,) = info
    addresses = _addresses(info)
    assert len(addresses) == 2 and first in addresses
    (added,) = [a for a in addresses if a != first]
    (port,) = sandbox.client.list("ports", {"device_id": server.uuid})
    assert port["id"] == vif["id"]
    assert sorted(f["ip_address"] for f in port["fixed_ips"]) == addresses

    bare = sandbox.network("bare", cidr=None)
    with pytest.raises(errors.NetworkNotFoundForInstance):  # no subnet
        net.add_fixed_ip(server, bare["id"])
    elsewhere = sandbox.network("elsewhere", cidr="10.22.0.0/24")
    with pytest.raises(errors.NetworkNotFoundForInstance):  # no port of the server there
        net.add_fixed_ip(server, elsewhere["id"])

    assert _addresses(net.remove_fixed_ip(server, added)) == [first]
    with pytest.raises(errors.FixedIpNotFoundForInstance, match=f"does not have fixed IP '{added}'"):  # fmt: skip
        net.remove_fixed_ip(server, added)
    net.deallocate_for_instance(server)
