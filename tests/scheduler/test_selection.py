"""Selection against the embedded real Placement and a SQLite cell DB with three fake hosts."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_models import AllocationCandidates, CandidateQuery
from openkeel.domain.errors import NoValidHost
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.scheduler import (
    DeleteAggregate,
    SelectDestinations,
    UpdateAggregates,
    UpdateInstanceInfo,
)
from openkeel.scheduler.endpoint import SchedulerEndpoint
from tests.scheduler.conftest import CELL1, Cloud

CTX = CallContext(user_id="u1", project_id="p1")
NOT_ENOUGH = "No valid host was found. There are not enough hosts available."


def spec(memory_mb: int = 1024, **extra: Any) -> dict[str, Any]:
    flavor = {"vcpus": 1, "memory_mb": memory_mb, "root_gb": 10, "ephemeral_gb": 0, "swap": 0}
    flavor.update(extra.pop("flavor", {}))
    return {"flavor": flavor, "project_id": "p1", "user_id": "u1", **extra}


def uuids(count: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(count)]


def chosen_hosts(result: list[Any]) -> list[str]:
    return [per_instance[0]["service_host"] for per_instance in result]


def select(endpoint: SchedulerEndpoint, request: dict[str, Any], instances: list[str]) -> Any:
    message = SelectDestinations(request, tuple(instances), return_objects=True)
    return endpoint.select_destinations(CTX, message)


@pytest.fixture
def three(cloud: Cloud) -> Cloud:
    for name in ("host1", "host2", "host3"):
        cloud.add_host(name)
    return cloud


def test_claims_the_flavor_in_placement(three: Cloud) -> None:
    (instance,) = uuids(1)
    result = select(three.endpoint(), spec(), [instance])
    (selection,) = result[0]
    host = selection["service_host"]
    assert selection["nodename"] == f"{host}.node"
    assert selection["compute_node_uuid"] == three.providers[host]
    assert selection["cell_uuid"] == CELL1
    assert selection["allocation_request_version"] == "1.39"
    claimed = three.placement.get_allocations(instance)
    assert claimed.allocations == {
        three.providers[host]: {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}
    }
    assert (claimed.project_id, claimed.user_id) == ("p1", "u1")
    assert json.loads(selection["allocation_request"])["allocations"] == {
        three.providers[host]: {"resources": {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}}
    }


def test_boot_from_volume_claims_no_root_disk(three: Cloud) -> None:
    (instance,) = uuids(1)
    select(three.endpoint(), spec(is_bfv=True, flavor={"swap": 1500}), [instance])
    (resources,) = three.placement.get_allocations(instance).allocations.values()
    assert resources == {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 2}


def test_weighers_see_claims_made_since_the_last_resource_audit(three: Cloud) -> None:
    """The compute_nodes rows still say every host is empty (no audit ran since), but
    Placement holds claims on host1 and host2: a burst's next server goes to host3."""
    for host in ("host1", "host2"):
        three.placement.claim(
            str(uuid.uuid4()), {three.providers[host]: {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10}},
            project_id="p1", user_id="u1",
        )  # fmt: skip
    assert chosen_hosts(select(three.endpoint(), spec(), uuids(1))) == ["host3"]


def test_capacity_is_respected_and_instances_spread(three: Cloud) -> None:
    instances = uuids(6)
    result = select(three.endpoint(), spec(num_instances=6), instances)
    hosts = chosen_hosts(result)
    assert sorted(hosts) == ["host1", "host1", "host2", "host2", "host3", "host3"]
    assert len(set(hosts[:3])) == 3  # RAM weigher spreads before stacking
    for instance, host in zip(instances, hosts, strict=True):
        assert three.host_of(instance) == host
    with pytest.raises(NoValidHost) as caught:
        select(three.endpoint(), spec(), uuids(1))
    assert caught.value.message == "No valid host was found. "


def test_nothing_fits(three: Cloud) -> None:
    (instance,) = uuids(1)
    with pytest.raises(NoValidHost) as caught:
        select(three.endpoint(), spec(memory_mb=4096), [instance])
    assert str(caught.value) == "No valid host was found. "
    assert three.placement.get_allocations(instance).allocations == {}


def test_multi_instance_rolls_back_claims_when_one_does_not_fit(three: Cloud) -> None:
    instances = uuids(4)
    with pytest.raises(NoValidHost) as caught:
        select(three.endpoint(), spec(memory_mb=2048, num_instances=4), instances)
    assert caught.value.message == NOT_ENOUGH
    for instance in instances:
        assert three.placement.get_allocations(instance).allocations == {}
    for node in three.providers.values():
        assert three.placement.get_provider_usages(node)["MEMORY_MB"] == 0


def group(policy: str, **rules: int) -> dict[str, Any]:
    return {"uuid": str(uuid.uuid4()), "policy": policy, "rules": rules, "members": []}


def test_anti_affinity_spreads(three: Cloud) -> None:
    result = select(three.endpoint(), spec(instance_group=group("anti-affinity")), uuids(3))
    assert sorted(chosen_hosts(result)) == ["host1", "host2", "host3"]


def test_anti_affinity_with_a_fourth_member_fails_and_rolls_back(three: Cloud) -> None:
    instances = uuids(4)
    with pytest.raises(NoValidHost):
        select(
            three.endpoint(), spec(memory_mb=256, instance_group=group("anti-affinity")), instances
        )
    assert all(three.placement.get_allocations(i).allocations == {} for i in instances)


def test_anti_affinity_max_server_per_host(three: Cloud) -> None:
    request = spec(memory_mb=256, instance_group=group("anti-affinity", max_server_per_host=2))
    hosts = chosen_hosts(select(three.endpoint(), request, uuids(6)))
    assert sorted(hosts) == ["host1", "host1", "host2", "host2", "host3", "host3"]


def test_anti_affinity_across_requests_uses_the_scheduler_own_claims(three: Cloud) -> None:
    endpoint = three.endpoint()
    anti = group("anti-affinity")
    first, second = uuids(2)
    host_a = chosen_hosts(
        select(endpoint, spec(instance_group={**anti, "members": [first]}), [first])
    )
    request = spec(instance_group={**anti, "members": [first, second]})
    host_b = chosen_hosts(select(endpoint, request, [second]))
    assert host_a != host_b


def test_affinity_packs(three: Cloud) -> None:
    result = select(
        three.endpoint(), spec(memory_mb=512, instance_group=group("affinity")), uuids(3)
    )
    assert len(set(chosen_hosts(result))) == 1


def test_affinity_follows_existing_members(three: Cloud) -> None:
    endpoint = three.endpoint()
    member = str(uuid.uuid4())
    endpoint.update_instance_info(CTX, UpdateInstanceInfo("host3", ({"uuid": member},)))
    request = spec(instance_group={**group("affinity"), "members": [member]})
    assert chosen_hosts(select(endpoint, request, uuids(1))) == ["host3"]


def test_soft_anti_affinity_weigher_spreads(three: Cloud) -> None:
    request = spec(memory_mb=64, instance_group=group("soft-anti-affinity"))
    endpoint = three.endpoint(
        **{
            "filter_scheduler.ram_weight_multiplier": 0.0,
            "filter_scheduler.cpu_weight_multiplier": 0.0,
            "filter_scheduler.disk_weight_multiplier": 0.0,
        }
    )
    assert sorted(chosen_hosts(select(endpoint, request, uuids(3)))) == ["host1", "host2", "host3"]


def test_soft_affinity_weigher_packs(three: Cloud) -> None:
    request = spec(memory_mb=64, instance_group=group("soft-affinity"))
    endpoint = three.endpoint(**{"filter_scheduler.soft_affinity_weight_multiplier": 100.0})
    assert len(set(chosen_hosts(select(endpoint, request, uuids(3))))) == 1


def az_aggregate(host: str, zone: str) -> dict[str, Any]:
    return {
        "id": 1,
        "uuid": str(uuid.uuid4()),
        "name": zone,
        "hosts": [host],
        "metadata": {"availability_zone": zone},
    }


def test_availability_zone(three: Cloud) -> None:
    endpoint = three.endpoint()
    endpoint.update_aggregates(CTX, UpdateAggregates((az_aggregate("host2", "az1"),)))
    inside = chosen_hosts(select(endpoint, spec(availability_zone="az1"), uuids(1)))
    assert inside == ["host2"]
    outside = select(endpoint, spec(availability_zone="nova", num_instances=4), uuids(4))
    assert sorted(chosen_hosts(outside)) == ["host1", "host1", "host3", "host3"]
    with pytest.raises(NoValidHost):
        select(endpoint, spec(availability_zone="nowhere"), uuids(1))
    endpoint.delete_aggregate(CTX, DeleteAggregate(az_aggregate("host2", "az1")))
    with pytest.raises(NoValidHost):
        select(endpoint, spec(availability_zone="az1"), uuids(1))


def test_disabled_and_down_hosts_are_skipped(cloud: Cloud) -> None:
    cloud.add_host("off", disabled=True, memory_mb=8192)
    cloud.add_host("silent", last_seen_up=cloud.now.replace(hour=11), memory_mb=8192)
    cloud.add_host("up")
    assert chosen_hosts(select(cloud.endpoint(), spec(), uuids(1))) == ["up"]


def test_alternates_come_unclaimed_from_the_same_cell(three: Cloud) -> None:
    (instance,) = uuids(1)
    result = three.endpoint().select_destinations(
        CTX,
        SelectDestinations(
            spec(),
            tuple([instance]),
            return_objects=True,
            return_alternates=True,
        ),
    )
    (per_instance,) = result
    assert len(per_instance) == 3
    assert len({s["service_host"] for s in per_instance}) == 3
    chosen, *alternates = per_instance
    for alternate in alternates:
        body = json.loads(alternate["allocation_request"])
        assert list(body["allocations"]) == [alternate["compute_node_uuid"]]
        usage = three.placement.get_provider_usages(alternate["compute_node_uuid"])
        assert usage["MEMORY_MB"] == 0
    assert three.host_of(instance) == chosen["service_host"]


def test_alternates_limited_by_max_attempts(three: Cloud) -> None:
    endpoint = three.endpoint(**{"scheduler.max_attempts": 2})
    result = endpoint.select_destinations(
        CTX,
        SelectDestinations(
            spec(num_instances=2),
            tuple(uuids(2)),
            return_objects=True,
            return_alternates=True,
        ),
    )
    assert [len(per_instance) for per_instance in result] == [2, 2]
    chosen = chosen_hosts(result)
    for per_instance in result:
        assert per_instance[1]["service_host"] not in chosen


def test_legacy_answer_without_objects(three: Cloud) -> None:
    result = three.endpoint().select_destinations(CTX, SelectDestinations(spec(), tuple(uuids(1))))
    assert result == [
        {"host": result[0]["host"], "nodename": f"{result[0]['host']}.node", "limits": {}}
    ]


class RacingPlacement(PlacementClient):
    """Another scheduler fills ``victim``'s provider right after candidates are listed."""

    victim = ""

    def get_allocation_candidates(self, query: CandidateQuery) -> AllocationCandidates:
        answer = super().get_allocation_candidates(query)
        rival = str(uuid.uuid4())
        self.claim(rival, {self.victim: {"MEMORY_MB": 2048}}, project_id="p2", user_id="u2")
        return answer


def test_claim_conflict_moves_to_the_next_host(three: Cloud) -> None:
    three.add_host("big", memory_mb=2048 + 1024)  # first by RAM weight
    racing = RacingPlacement.__new__(RacingPlacement)
    racing.__dict__.update(three.placement.__dict__)
    racing.victim = three.providers["big"]
    three.placement = racing
    (instance,) = uuids(1)
    result = select(three.endpoint(), spec(memory_mb=2048), [instance])
    assert chosen_hosts(result) != ["big"]
    assert three.host_of(instance) == result[0][0]["service_host"]


def test_hints_same_and_different_host(three: Cloud) -> None:
    endpoint = three.endpoint(
        **{
            "filter_scheduler.enabled_filters": [
                "ComputeFilter",
                "SameHostFilter",
                "DifferentHostFilter",
            ]
        }
    )
    neighbour = str(uuid.uuid4())
    endpoint.update_instance_info(CTX, UpdateInstanceInfo("host2", ({"uuid": neighbour},)))
    near = spec(scheduler_hints={"same_host": [neighbour]})
    assert chosen_hosts(select(endpoint, near, uuids(1))) == ["host2"]
    far = spec(scheduler_hints={"different_host": neighbour}, num_instances=4)
    assert "host2" not in chosen_hosts(select(endpoint, far, uuids(4)))


def test_forced_host_and_unknown_host(three: Cloud) -> None:
    endpoint = three.endpoint()
    assert chosen_hosts(select(endpoint, spec(force_hosts=["host3"]), uuids(1))) == ["host3"]
    destination = spec(requested_destination={"host": "host1", "node": "host1.node"})
    assert chosen_hosts(select(endpoint, destination, uuids(1))) == ["host1"]
    with pytest.raises(NoValidHost) as caught:
        select(endpoint, spec(force_hosts=["nohost"]), uuids(1))
    assert (
        caught.value.message == "No valid host was found. No such host - host: nohost node: None "
    )


def test_ignore_hosts(three: Cloud) -> None:
    hosts = chosen_hosts(select(three.endpoint(), spec(ignore_hosts=["host1", "HOST2"]), uuids(1)))
    assert hosts == ["host3"]


def test_required_trait(three: Cloud) -> None:
    three.placement.set_traits(three.providers["host1"], ["CUSTOM_FAST"])
    request = spec(flavor={"extra_specs": {"trait:CUSTOM_FAST": "required"}})
    assert chosen_hosts(select(three.endpoint(), request, uuids(1))) == ["host1"]
    forbidding = spec(num_instances=4, flavor={"extra_specs": {"trait:CUSTOM_FAST": "forbidden"}})
    assert "host1" not in chosen_hosts(select(three.endpoint(), forbidding, uuids(4)))


def test_availability_zone_through_placement_aggregates(three: Cloud) -> None:
    endpoint = three.endpoint(**{"scheduler.query_placement_for_availability_zone": True})
    aggregate = az_aggregate("host2", "az1")
    endpoint.update_aggregates(CTX, UpdateAggregates((aggregate,)))
    with pytest.raises(NoValidHost):  # not mirrored into Placement: no candidate
        select(endpoint, spec(availability_zone="az1"), uuids(1))
    three.placement.set_aggregates(three.providers["host2"], [aggregate["uuid"]])
    assert chosen_hosts(select(endpoint, spec(availability_zone="az1"), uuids(1))) == ["host2"]
