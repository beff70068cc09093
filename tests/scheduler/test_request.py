"""Request spec parsing and the Placement query built from it (pure)."""

from __future__ import annotations

import pytest

from openkeel.domain.errors import Invalid
from openkeel.scheduler.placement_query import candidate_query, flavor_resources
from openkeel.scheduler.request import GroupRequest, RequestedDestination, parse_request_spec

FLAVOR = {"vcpus": 2, "memory_mb": 2048, "root_gb": 20, "ephemeral_gb": 5, "swap": 1025}


def test_parse_full_spec() -> None:
    request = parse_request_spec(
        {
            "flavor": {**FLAVOR, "extra_specs": {"trait:CUSTOM_X": "required"}},
            "image": {"id": "img", "properties": {"hw_architecture": "x86_64"}},
            "num_instances": 3,
            "availability_zone": "az1",
            "scheduler_hints": {"same_host": "u1", "different_host": ["u2", "u3"]},
            "instance_group": {
                "uuid": "g",
                "policies": ["anti-affinity"],
                "rules": {"max_server_per_host": "2"},
                "hosts": ["h"],
                "members": ["m"],
            },
            "project_id": "p",
            "user_id": "u",
            "ignore_hosts": ["i"],
            "force_hosts": "f",
            "force_nodes": None,
            "requested_destination": {
                "host": "h",
                "node": "n",
                "cell": {"uuid": "c"},
                "aggregates": ["a,b", "c"],
            },
            "is_bfv": True,
            "unknown": "ignored",
        }
    )
    assert request.flavor.swap == 1025
    assert request.flavor.extra_specs == {"trait:CUSTOM_X": "required"}
    assert request.image.properties == {"hw_architecture": "x86_64"}
    assert request.num_instances == 3
    assert request.hint("same_host") == ("u1",)
    assert request.hint("different_host") == ("u2", "u3")
    assert request.instance_group == GroupRequest(
        uuid="g",
        policy="anti-affinity",
        rules={"max_server_per_host": "2"},
        hosts=frozenset({"h"}),
        members=frozenset({"m"}),
    )
    assert request.instance_group.max_server_per_host == 2
    assert request.force_hosts == ("f",) and request.force_nodes == ()
    assert request.requested_destination == RequestedDestination(
        host="h", node="n", cell="c", aggregates=(("a", "b"), ("c",))
    )
    assert request.is_bfv


def test_parse_unwraps_nova_objects_and_rejects_bad_specs() -> None:
    wrapped = {"nova_object.data": {"flavor": {"nova_object.data": FLAVOR}, "num_instances": 0}}
    request = parse_request_spec(wrapped)
    assert request.flavor.memory_mb == 2048 and request.num_instances == 1
    with pytest.raises(Invalid, match="Request spec has no flavor"):
        parse_request_spec({})
    with pytest.raises(Invalid, match="vcpus is not an integer"):
        parse_request_spec({"flavor": {"vcpus": "many"}})


def test_flavor_resources_as_nova_computes_them() -> None:
    request = parse_request_spec({"flavor": FLAVOR})
    # swap 1025 MB rounds up to 2 GB: 20 + 5 + 2
    assert flavor_resources(request) == {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 27}
    bfv = parse_request_spec({"flavor": FLAVOR, "is_bfv": True})
    assert flavor_resources(bfv)["DISK_GB"] == 7
    empty_disk = parse_request_spec({"flavor": {"vcpus": 1, "memory_mb": 64}, "is_bfv": True})
    assert flavor_resources(empty_disk) == {"VCPU": 1, "MEMORY_MB": 64}


def test_extra_spec_resource_overrides() -> None:
    specs = {
        "resources:VCPU": "0",
        "resources:PCPU": "2",
        "resources:CUSTOM_GPU": "1",
        "resources:DISK_GB": "0",
        "resources1:VGPU": "1",
    }
    request = parse_request_spec({"flavor": {**FLAVOR, "extra_specs": specs}})
    assert flavor_resources(request) == {"PCPU": 2, "MEMORY_MB": 2048, "CUSTOM_GPU": 1}


def test_candidate_query() -> None:
    request = parse_request_spec(
        {
            "flavor": {
                **FLAVOR,
                "extra_specs": {
                    "trait:HW_CPU_X86_AVX": "required",
                    "trait:CUSTOM_SLOW": "forbidden",
                },
            },
            "image": {
                "properties": {"trait:CUSTOM_IMG": "required", "traits_required": ["CUSTOM_LIST"]}
            },
            "requested_destination": {"aggregates": ["a,b"], "forbidden_aggregates": ["z"]},
        }
    )
    query = candidate_query(request, zone_aggregates=["zb", "za"], in_tree="node", limit=10)
    assert query.to_params() == [
        ("resources", "DISK_GB:27,MEMORY_MB:2048,VCPU:2"),
        ("required", "CUSTOM_IMG,CUSTOM_LIST,HW_CPU_X86_AVX,!COMPUTE_STATUS_DISABLED,!CUSTOM_SLOW"),
        ("member_of", "in:a,b"),
        ("member_of", "in:za,zb"),
        ("member_of", "!in:z"),
        ("in_tree", "node"),
        ("limit", "10"),
    ]


@pytest.mark.parametrize("hints", [{"group": "g"}, {"same_host": "x"}, {"different_host": []}])
def test_affinity_hints_lift_the_limit(hints: dict[str, object]) -> None:
    request = parse_request_spec({"flavor": FLAVOR, "scheduler_hints": hints})
    assert candidate_query(request, limit=10).limit is None
