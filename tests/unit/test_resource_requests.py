"""Ports' resource requests as Placement request groups (decision 0076), pure: both
``resource_request`` forms, the spec fields, the granular allocation-candidates query with
Nova's group_policy default, the conductor's provider mapping, the binding profile's
``allocation``, the mapping from an allocation, and the bandwidth inventory option."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openkeel.clients.placement_models import CandidateQuery
from openkeel.conductor.selections import SelectedHost
from openkeel.domain.errors import Invalid
from openkeel.domain.resource_requests import (
    NET_BW_EGR,
    NET_BW_IGR,
    PortRequests,
    allocated_resources,
    binding_allocation,
    mapping_from_allocation,
    parse_bandwidth_inventory,
    port_requests,
    ports_requests,
    provider_mapping,
    trait_name,
)
from openkeel.scheduler.placement_query import candidate_query
from openkeel.scheduler.request import parse_request_spec

PORT = "a7b2a9b4-63a9-4d52-a1a4-0d2f3b1f3f10"
OLD = {"resources": {NET_BW_EGR: 1000, NET_BW_IGR: 500},
       "required": ["CUSTOM_PHYSNET_PHYS1", "CUSTOM_VNIC_TYPE_NORMAL"]}  # fmt: skip
EXTENDED = {
    "request_groups": [
        {"id": "g-bw", "resources": {NET_BW_EGR: 1000}, "required": ["CUSTOM_PHYSNET_PHYS1"]},
        {"id": "g-pps", "resources": {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 10},
         "required": ["CUSTOM_VNIC_TYPE_NORMAL"]},
    ],
    "same_subtree": ["g-bw", "g-pps"],
}  # fmt: skip
FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


def test_the_old_form_is_one_group_of_the_port() -> None:
    (group,) = port_requests(PORT, OLD).groups
    assert group.requester_id == PORT
    assert dict(group.resources) == {NET_BW_EGR: 1000, NET_BW_IGR: 500}
    assert group.required_traits == ("CUSTOM_PHYSNET_PHYS1", "CUSTOM_VNIC_TYPE_NORMAL")
    assert port_requests(PORT, OLD).same_subtree == ()


def test_the_extended_form_is_a_group_per_entry_and_a_subtree() -> None:
    found = port_requests(PORT, EXTENDED)
    assert [g.requester_id for g in found.groups] == ["g-bw", "g-pps"]
    assert found.same_subtree == (("g-bw", "g-pps"),)


def test_no_request_and_bad_requests() -> None:
    assert not port_requests(PORT, None) and not port_requests(PORT, {})
    assert not ports_requests([{"id": PORT, "resource_request": None}, {"id": "p2"}])
    with pytest.raises(Invalid):
        port_requests(PORT, {"resources": {}, "required": ["CUSTOM_X"]})
    with pytest.raises(Invalid):
        port_requests(PORT, {"resources": {NET_BW_EGR: "lots"}})


def test_spec_round_trip() -> None:
    requests = ports_requests([{"id": PORT, "resource_request": OLD},
                               {"id": "p2", "resource_request": EXTENDED}])  # fmt: skip
    spec = requests.spec_fields()
    assert spec["request_level_params"]["same_subtree"] == [["g-bw", "g-pps"]]
    assert PortRequests.from_spec(json.loads(json.dumps(spec))) == requests


def _query_params(spec: dict[str, Any], extra_specs: dict[str, str] | None = None) -> list[tuple[str, str]]:  # fmt: skip
    flavor = {**FLAVOR, "extra_specs": extra_specs or {}}
    return candidate_query(parse_request_spec({"flavor": flavor, **spec})).to_params()


def test_the_query_has_a_suffixed_group_per_port_group() -> None:
    params = _query_params(port_requests(PORT, OLD).spec_fields())
    assert (f"resources{PORT}", f"{NET_BW_EGR}:1000,{NET_BW_IGR}:500") in params
    assert (f"required{PORT}", "CUSTOM_PHYSNET_PHYS1,CUSTOM_VNIC_TYPE_NORMAL") in params
    assert ("resources", "DISK_GB:1,MEMORY_MB:512,VCPU:1") in params
    # One suffixed group: no group policy needed (Nova sets none).
    assert not [p for p in params if p[0] == "group_policy"]


def test_two_groups_default_the_group_policy_to_none_and_keep_the_flavors() -> None:
    spec = port_requests(PORT, EXTENDED).spec_fields()
    params = _query_params(spec)
    assert ("group_policy", "none") in params
    assert ("same_subtree", "g-bw,g-pps") in params
    assert ("resourcesg-pps", "NET_PACKET_RATE_KILOPACKET_PER_SEC:10") in params
    assert ("group_policy", "isolate") in _query_params(spec, {"group_policy": "isolate"})


def test_the_conductor_maps_groups_to_the_allocation_requests_providers() -> None:
    spec = {"flavor": FLAVOR, **port_requests(PORT, EXTENDED).spec_fields()}
    body = {"allocations": {}, "mappings": {"g-bw": ["rp-bw"], "g-pps": ["rp-pps"], "": ["cn"]}}
    chosen = SelectedHost.from_primitive(
        {"service_host": "h", "allocation_request": json.dumps(body)}
    )
    filled = chosen.fill_provider_mapping(spec)
    assert provider_mapping(filled) == {"g-bw": ("rp-bw",), "g-pps": ("rp-pps",)}
    assert chosen.fill_provider_mapping({"flavor": FLAVOR}) == {"flavor": FLAVOR}
    missing = SelectedHost.from_primitive({"service_host": "h", "allocation_request": json.dumps(
        {"allocations": {}, "mappings": {"g-bw": ["rp-bw"]}})})  # fmt: skip
    with pytest.raises(Invalid):
        missing.fill_provider_mapping(spec)


def test_the_binding_profiles_allocation() -> None:
    mapping = {PORT: ("rp-1",), "g-bw": ("rp-bw",), "g-pps": ("rp-pps",)}
    assert binding_allocation(PORT, OLD, mapping) == "rp-1"
    assert binding_allocation(PORT, EXTENDED, mapping) == {"g-bw": "rp-bw", "g-pps": "rp-pps"}
    assert binding_allocation(PORT, None, mapping) is None
    with pytest.raises(Invalid):
        binding_allocation(PORT, OLD, {})


def test_the_mapping_from_an_allocation() -> None:
    requests = ports_requests(
        [{"id": PORT, "resource_request": OLD}, {"id": "p2", "resource_request": OLD}]
    )
    allocations = {
        "cn": {"VCPU": 1},
        "rp-a": {NET_BW_EGR: 1000, NET_BW_IGR: 500},
        "rp-b": {NET_BW_EGR: 1000, NET_BW_IGR: 500},
    }
    traits = {"rp-a": OLD["required"], "rp-b": OLD["required"]}
    # Two identical ports on two providers: each gets one.
    assert mapping_from_allocation(requests, allocations, traits) == {
        PORT: ("rp-a",),
        "p2": ("rp-b",),
    }
    with pytest.raises(Invalid):
        mapping_from_allocation(requests, allocations, {"rp-a": OLD["required"]})


def test_the_bandwidth_inventory_option() -> None:
    item = parse_bandwidth_inventory("phys-1:1000:2000:normal+direct@h1+h2")
    assert (item.physnet, item.egress_kbps, item.ingress_kbps) == ("phys-1", 1000, 2000)
    assert item.traits() == (
        "CUSTOM_PHYSNET_PHYS_1",
        "CUSTOM_VNIC_TYPE_NORMAL",
        "CUSTOM_VNIC_TYPE_DIRECT",
    )
    assert item.serves("h1") and not item.serves("h3")
    assert parse_bandwidth_inventory("public:5:6").serves("any")
    assert trait_name("PHYSNET", "public") == "CUSTOM_PHYSNET_PUBLIC"
    for bad in ("public:5", "public:x:6", ":5:6"):
        with pytest.raises(Invalid):
            parse_bandwidth_inventory(bad)


def test_what_a_bound_port_holds() -> None:
    assert allocated_resources(PORT, OLD, "rp-1") == {"rp-1": {NET_BW_EGR: 1000, NET_BW_IGR: 500}}
    assert allocated_resources(PORT, EXTENDED, {"g-bw": "rp-bw", "g-pps": "rp-pps"}) == {
        "rp-bw": {NET_BW_EGR: 1000},
        "rp-pps": {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 10},
    }
    assert allocated_resources(PORT, OLD, None) == {} == allocated_resources(PORT, None, "rp")


def test_a_query_of_suffixed_groups_only_in_one_tree() -> None:
    groups = port_requests(PORT, OLD).query_groups()
    params = CandidateQuery(resources={}, groups=groups, group_policy="none",
                            groups_in_tree="node").to_params()  # fmt: skip
    assert not [p for p in params if p[0] == "resources"]
    assert (f"in_tree{PORT}", "node") in params and ("group_policy", "none") in params
