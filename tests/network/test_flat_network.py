"""The network adapters: flat network allocation on the API DB, the none backend, validation."""

from __future__ import annotations

import threading

import pytest

from openkeel.api.services import ApiServices
from openkeel.conf import make_config
from openkeel.db.repositories import instance_mappings
from openkeel.network import errors, get_network_adapter
from openkeel.network.adapter import InstanceNetRef, NoNetwork, RequestedNetwork
from openkeel.network.flat import FlatNetwork

NET_ID = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


def _flat(services: ApiServices, cidr: str = "10.0.0.0/29") -> FlatNetwork:
    conf = make_config(overrides={"openkeel_network.cidr": cidr})
    adapter = get_network_adapter(conf, services.api_db)
    assert isinstance(adapter, FlatNetwork)
    return adapter


def _inst(n: int) -> InstanceNetRef:
    return InstanceNetRef(uuid=f"00000000-0000-4000-8000-{n:012d}", project_id="demo")


def test_auto_allocation_has_novas_network_model_shape(services: ApiServices) -> None:
    net = _flat(services)
    info = net.allocate_for_instance(_inst(1), [RequestedNetwork(network_id="auto")])
    assert len(info) == 1
    vif = info[0]
    assert vif["address"].startswith("fa:16:3e:")
    assert vif["network"]["id"] == NET_ID
    assert vif["network"]["label"] == "private"
    subnet = vif["network"]["subnets"][0]
    assert subnet["cidr"] == "10.0.0.0/29"
    assert subnet["gateway"] == {"address": "10.0.0.1", "type": "gateway", "version": 4, "meta": {}}
    assert subnet["ips"] == [
        {"address": "10.0.0.2", "type": "fixed", "version": 4, "meta": {}, "floating_ips": []}
    ]
    assert vif["active"] is True
    assert vif["vnic_type"] == "normal"
    assert vif["devname"] == f"tap{vif['id']}"[:14]


def test_allocation_is_idempotent_and_released(services: ApiServices) -> None:
    net = _flat(services)
    first = net.allocate_for_instance(_inst(1), [])
    assert net.allocate_for_instance(_inst(1), []) == first
    second = net.allocate_for_instance(_inst(2), [])
    assert second[0]["network"]["subnets"][0]["ips"][0]["address"] == "10.0.0.3"
    net.deallocate_for_instance(_inst(1))
    assert net.get_instance_nw_info(_inst(1)) == []
    third = net.allocate_for_instance(_inst(3), [])
    assert third[0]["network"]["subnets"][0]["ips"][0]["address"] == "10.0.0.2"


def test_none_requested_gives_no_vif(services: ApiServices) -> None:
    net = _flat(services)
    assert net.allocate_for_instance(_inst(1), [RequestedNetwork(network_id="none")]) == []


def test_pool_exhaustion(services: ApiServices) -> None:
    net = _flat(services, "10.0.0.0/30")  # hosts .1 (gateway) and .2
    net.allocate_for_instance(_inst(1), [])
    with pytest.raises(errors.NoMoreFixedIps) as exc:
        net.allocate_for_instance(_inst(2), [])
    assert exc.value.message == f"No fixed IP addresses available for network: {NET_ID}"


def test_concurrent_allocations_get_distinct_addresses(services: ApiServices) -> None:
    net = _flat(services, "10.0.0.0/27")
    results: dict[int, str] = {}

    def allocate(n: int) -> None:
        info = net.allocate_for_instance(_inst(n), [])
        results[n] = info[0]["network"]["subnets"][0]["ips"][0]["address"]

    threads = [threading.Thread(target=allocate, args=(n,)) for n in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results.values())) == 10


def test_fixed_ip_request_and_conflict(services: ApiServices) -> None:
    net = _flat(services)
    wanted = [RequestedNetwork(network_id=NET_ID, address="10.0.0.5")]
    assert net.validate_networks(wanted, 1) == 1
    info = net.allocate_for_instance(_inst(1), wanted)
    assert info[0]["network"]["subnets"][0]["ips"][0]["address"] == "10.0.0.5"
    with pytest.raises(errors.FixedIpAlreadyInUse) as exc:
        net.validate_networks(wanted, 1)
    assert exc.value.message == (
        f"Fixed IP address 10.0.0.5 is already in use on instance {_inst(1).uuid}."
    )
    assert exc.value.code == 400


def test_validation_errors(services: ApiServices) -> None:
    net = _flat(services)
    with pytest.raises(errors.NetworkNotFound) as exc:
        net.validate_networks([RequestedNetwork(network_id="nope")], 1)
    assert exc.value.message == "Network nope could not be found."
    with pytest.raises(errors.PortNotFound) as port:
        net.validate_networks([RequestedNetwork(port_id="p1")], 1)
    assert port.value.message == "Port id p1 could not be found."
    by_label = [RequestedNetwork(network_id="private", address="10.0.0.3")]
    with pytest.raises(errors.InvalidFixedIpAndMaxCountRequest):
        net.validate_networks(by_label, 2)
    with pytest.raises(errors.FixedIpNotInNetwork):
        net.validate_networks([RequestedNetwork(network_id=NET_ID, address="192.0.2.1")], 1)
    with pytest.raises(errors.InvalidFixedIp):
        net.validate_networks([RequestedNetwork(network_id=NET_ID, address="x")], 1)


def test_none_backend(services: ApiServices) -> None:
    conf = make_config(overrides={"openkeel_network.backend": "none"})
    net = get_network_adapter(conf, services.api_db)
    assert isinstance(net, NoNetwork)
    assert net.validate_networks([RequestedNetwork(network_id="auto")], 3) == 3
    assert net.allocate_for_instance(_inst(1), []) == []
    with pytest.raises(errors.NetworkNotFound):
        net.validate_networks([RequestedNetwork(network_id=NET_ID)], 1)


def test_requested_network_wire_form() -> None:
    item = RequestedNetwork.from_primitive({"uuid": NET_ID, "fixed_ip": "10.0.0.9", "tag": "t"})
    assert item.to_primitive() == {
        "network_id": NET_ID,
        "address": "10.0.0.9",
        "port_id": None,
        "tag": "t",
    }


def test_fixed_ip_of_another_project_is_not_named(services: ApiServices) -> None:
    net = _flat(services)
    with services.api_db.begin() as conn:
        instance_mappings.create(conn, _inst(1).uuid, "demo", "demo", cell_uuid=None)
    wanted = [RequestedNetwork(network_id=NET_ID, address="10.0.0.5")]
    net.allocate_for_instance(_inst(1), wanted)
    # Neutron shows a non-admin only its own ports: another project passes validation ...
    assert net.validate_networks(wanted, 1, project_id="other") == 1
    # ... and fails at allocation without learning who holds the address.
    with pytest.raises(errors.FixedIpAlreadyInUse) as exc:
        net.allocate_for_instance(_inst(2), wanted)
    assert exc.value.message == "Fixed IP 10.0.0.5 is already in use."
    with pytest.raises(errors.FixedIpAlreadyInUse) as own:
        net.validate_networks(wanted, 1, project_id="demo")
    assert own.value.message == (
        f"Fixed IP address 10.0.0.5 is already in use on instance {_inst(1).uuid}."
    )
