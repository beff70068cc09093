"""Host weighers, pure: Nova's normalization, multipliers and aggregate overrides."""

from __future__ import annotations

import pytest

from openkeel.domain.aggregates import Aggregate
from openkeel.scheduler.host_state import HostState
from openkeel.scheduler.request import FlavorRequest, GroupRequest, SchedulingRequest
from openkeel.scheduler.weighers import (
    WeigherSettings,
    load_weighers,
    normalize,
    weigh_hosts,
)
from openkeel.scheduler.weighers.cpu import CPUWeigher
from openkeel.scheduler.weighers.disk import DiskWeigher
from openkeel.scheduler.weighers.ram import RAMWeigher
from openkeel.scheduler.weighers.soft_affinity import ServerGroupSoftAffinityWeigher
from openkeel.scheduler.weighers.soft_anti_affinity import ServerGroupSoftAntiAffinityWeigher

REQUEST = SchedulingRequest(flavor=FlavorRequest(vcpus=1, memory_mb=1))
DEFAULTS = WeigherSettings()


def host(name: str, **values: object) -> HostState:
    return HostState(uuid=name, host=name, nodename=name, cell_uuid="c", **values)  # type: ignore[arg-type]


def ranked(pairs: list[tuple[float, HostState]]) -> list[tuple[str, float]]:
    return [(h.host, round(w, 4)) for w, h in pairs]


def test_normalize() -> None:
    assert normalize([]) == []
    assert normalize([5, 5, 5]) == [0.0, 0.0, 0.0]
    assert normalize([0, 5, 10]) == [0.0, 0.5, 1.0]
    assert normalize([5], minval=0, maxval=10) == [0.5]


def test_ram_weigher_spreads_and_negative_multiplier_stacks() -> None:
    hosts = [host("a", free_ram_mb=512), host("b", free_ram_mb=2048), host("c", free_ram_mb=1024)]
    spread = weigh_hosts([RAMWeigher(DEFAULTS)], hosts, REQUEST)
    assert ranked(spread) == [("b", 1.0), ("c", 0.3333), ("a", 0.0)]
    stack = WeigherSettings({"ram_weight_multiplier": -1.0})
    assert [h.host for _, h in weigh_hosts([RAMWeigher(stack)], hosts, REQUEST)] == ["a", "c", "b"]


def test_cpu_weigher_counts_overcommit() -> None:
    hosts = [
        host("a", vcpus_total=4, cpu_allocation_ratio=16.0, vcpus_used=10),  # 54 free
        host("b", vcpus_total=8, cpu_allocation_ratio=1.0, vcpus_used=0),  # 8 free
    ]
    assert CPUWeigher(DEFAULTS).weigh(hosts[0], REQUEST) == 54.0
    assert ranked(weigh_hosts([CPUWeigher(DEFAULTS)], hosts, REQUEST)) == [("a", 1.0), ("b", 0.0)]


def test_weights_sum_over_weighers_with_multipliers() -> None:
    settings = WeigherSettings({"ram_weight_multiplier": 1.0, "disk_weight_multiplier": 2.0})
    hosts = [
        host("a", free_ram_mb=2048, free_disk_mb=0),
        host("b", free_ram_mb=0, free_disk_mb=1024),
    ]
    pairs = weigh_hosts([RAMWeigher(settings), DiskWeigher(settings)], hosts, REQUEST)
    assert ranked(pairs) == [("b", 2.0), ("a", 1.0)]


def test_single_host_is_not_weighed() -> None:
    assert ranked(weigh_hosts([RAMWeigher(DEFAULTS)], [host("a", free_ram_mb=9)], REQUEST)) == [
        ("a", 0.0)
    ]


def test_aggregate_metadata_overrides_the_multiplier() -> None:
    agg = Aggregate(
        id=1, uuid="x", name="x", hosts=("a",), metadata={"ram_weight_multiplier": "-3.0"}
    )
    other = Aggregate(
        id=2, uuid="y", name="y", hosts=("a",), metadata={"ram_weight_multiplier": "5"}
    )
    weigher = RAMWeigher(DEFAULTS)
    assert weigher.weight_multiplier(host("a", aggregates=(agg, other))) == -3.0
    assert weigher.weight_multiplier(host("b")) == 1.0
    bad = Aggregate(id=3, uuid="z", name="z", metadata={"ram_weight_multiplier": "lots"})
    assert weigher.weight_multiplier(host("a", aggregates=(bad,))) == 1.0


def group_request(policy: str) -> SchedulingRequest:
    group = GroupRequest(uuid="g", policy=policy, members=frozenset({"m1", "m2", "m3"}))
    return SchedulingRequest(flavor=FlavorRequest(vcpus=1, memory_mb=1), instance_group=group)


def test_soft_affinity_weighers() -> None:
    hosts = [host("a", instances={"m1", "m2"}), host("b", instances={"m3", "x"}), host("c")]
    affinity = weigh_hosts(
        [ServerGroupSoftAffinityWeigher(DEFAULTS)], hosts, group_request("soft-affinity")
    )
    assert ranked(affinity) == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    anti = weigh_hosts(
        [ServerGroupSoftAntiAffinityWeigher(DEFAULTS)], hosts, group_request("soft-anti-affinity")
    )
    assert ranked(anti) == [("c", 1.0), ("b", 0.5), ("a", 0.0)]
    unrelated = weigh_hosts(
        [ServerGroupSoftAffinityWeigher(DEFAULTS)], hosts, group_request("anti-affinity")
    )
    assert [w for w, _ in unrelated] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (
            ["nova.scheduler.weights.all_weighers"],
            [
                "CPUWeigher",
                "DiskWeigher",
                "RAMWeigher",
                "ServerGroupSoftAffinityWeigher",
                "ServerGroupSoftAntiAffinityWeigher",
            ],
        ),
        (["nova.scheduler.weights.ram.RAMWeigher", "MetricsWeigher"], ["RAMWeigher"]),
    ],
)
def test_load_weighers(names: list[str], expected: list[str]) -> None:
    assert [type(w).__name__ for w in load_weighers(names, DEFAULTS)] == expected
