"""Host filters, pure: a host state and a request in, a verdict out."""

from __future__ import annotations

import datetime

import pytest

from openkeel.domain.aggregates import Aggregate
from openkeel.scheduler.filters import (
    FilterNotFound,
    FilterSettings,
    filter_hosts,
    load_filters,
)
from openkeel.scheduler.filters.availability_zone import AvailabilityZoneFilter
from openkeel.scheduler.filters.compute import ComputeFilter
from openkeel.scheduler.filters.compute_capabilities import ComputeCapabilitiesFilter, matches
from openkeel.scheduler.filters.different_host import DifferentHostFilter
from openkeel.scheduler.filters.image_properties import ImagePropertiesFilter
from openkeel.scheduler.filters.same_host import SameHostFilter
from openkeel.scheduler.filters.server_group_affinity import ServerGroupAffinityFilter
from openkeel.scheduler.filters.server_group_anti_affinity import ServerGroupAntiAffinityFilter
from openkeel.scheduler.host_state import HostState, ServiceState
from openkeel.scheduler.request import (
    FlavorRequest,
    GroupRequest,
    ImageRequest,
    SchedulingRequest,
)

NOW = datetime.datetime(2025, 1, 1, 12, 0, 0)
SETTINGS = FilterSettings(service_down_time=60, clock=lambda: NOW)


def host(name: str = "h1", **values: object) -> HostState:
    values.setdefault("service", ServiceState(last_heartbeat=NOW))
    return HostState(uuid=f"{name}-uuid", host=name, nodename=name, cell_uuid="c1", **values)  # type: ignore[arg-type]


def request(**values: object) -> SchedulingRequest:
    return SchedulingRequest(flavor=FlavorRequest(vcpus=1, memory_mb=512), **values)  # type: ignore[arg-type]


def test_compute_filter() -> None:
    check = ComputeFilter(SETTINGS)
    assert check.host_passes(host(), request())
    assert not check.host_passes(
        host(service=ServiceState(disabled=True, last_heartbeat=NOW)), request()
    )
    assert not check.host_passes(
        host(service=ServiceState(forced_down=True, last_heartbeat=NOW)), request()
    )
    late = NOW - datetime.timedelta(seconds=61)
    assert not check.host_passes(host(service=ServiceState(last_heartbeat=late)), request())
    edge = NOW - datetime.timedelta(seconds=60)
    assert check.host_passes(host(service=ServiceState(last_heartbeat=edge)), request())
    assert not check.host_passes(host(service=ServiceState(last_heartbeat=None)), request())


def zone(name: str) -> Aggregate:
    return Aggregate(id=1, uuid="a", name="a", hosts=("h1",), metadata={"availability_zone": name})


def test_availability_zone_filter() -> None:
    check = AvailabilityZoneFilter(SETTINGS)
    assert check.host_passes(host(), request())
    assert check.host_passes(host(), request(availability_zone="nova"))
    assert not check.host_passes(host(), request(availability_zone="az1"))
    assert check.host_passes(host(aggregates=(zone("az1"),)), request(availability_zone="az1"))
    assert not check.host_passes(host(aggregates=(zone("az1"),)), request(availability_zone="nova"))
    other_default = AvailabilityZoneFilter(FilterSettings(default_availability_zone="zz"))
    assert other_default.host_passes(host(), request(availability_zone="zz"))


def image(**props: object) -> ImageRequest:
    return ImageRequest(id="img", properties=props)


def test_image_properties_filter() -> None:
    check = ImagePropertiesFilter(SETTINGS)
    kvm = host(supported_instances=(("x86_64", "kvm", "hvm"),), hypervisor_version=6002000)
    assert check.host_passes(kvm, request())
    assert check.host_passes(kvm, request(image=image(hw_architecture="x86_64")))
    assert check.host_passes(kvm, request(image=image(hw_architecture="amd64")))
    assert not check.host_passes(kvm, request(image=image(hw_architecture="aarch64")))
    assert check.host_passes(kvm, request(image=image(img_hv_type="kvm", hw_vm_mode="hvm")))
    assert not check.host_passes(kvm, request(image=image(img_hv_type="qemu")))
    assert not check.host_passes(kvm, request(image=image(hw_vm_mode="xen")))
    assert not check.host_passes(host(), request(image=image(hw_architecture="x86_64")))
    assert check.host_passes(
        kvm, request(image=image(hw_architecture="x86_64", img_hv_requested_version=">=6.0"))
    )
    assert not check.host_passes(
        kvm, request(image=image(hw_architecture="x86_64", img_hv_requested_version=">=7.0"))
    )
    arm_default = ImagePropertiesFilter(FilterSettings(default_architecture="aarch64"))
    assert not arm_default.host_passes(kvm, request())


def test_server_group_affinity_filter() -> None:
    check = ServerGroupAffinityFilter(SETTINGS)
    fresh = GroupRequest(uuid="g", policy="affinity")
    assert check.host_passes(host("h1"), request(instance_group=fresh))
    placed = GroupRequest(uuid="g", policy="affinity", hosts=frozenset({"h2"}))
    assert not check.host_passes(host("h1"), request(instance_group=placed))
    assert check.host_passes(host("h2"), request(instance_group=placed))
    other = GroupRequest(uuid="g", policy="anti-affinity", hosts=frozenset({"h2"}))
    assert check.host_passes(host("h1"), request(instance_group=other))


def test_server_group_anti_affinity_filter() -> None:
    check = ServerGroupAntiAffinityFilter(SETTINGS)
    members = frozenset({"m1", "m2", "new"})
    group = GroupRequest(uuid="g", policy="anti-affinity", members=members)
    busy = host(instances={"m1", "stranger"})
    assert not check.host_passes(busy, request(instance_group=group, instance_uuid="new"))
    assert check.host_passes(host(instances={"stranger"}), request(instance_group=group))
    two = GroupRequest(
        uuid="g", policy="anti-affinity", members=members, rules={"max_server_per_host": 2}
    )
    assert check.host_passes(busy, request(instance_group=two, instance_uuid="new"))
    assert not check.host_passes(host(instances={"m1", "m2"}), request(instance_group=two))
    # an instance already on the host (a re-schedule) passes
    assert check.host_passes(
        host(instances={"m1", "new"}), request(instance_group=group, instance_uuid="new")
    )
    affinity = GroupRequest(uuid="g", policy="affinity", members=members)
    assert check.host_passes(busy, request(instance_group=affinity))


def test_same_and_different_host_filters() -> None:
    same, different = SameHostFilter(SETTINGS), DifferentHostFilter(SETTINGS)
    h = host(instances={"a"})
    assert same.host_passes(h, request())
    assert different.host_passes(h, request())
    assert same.host_passes(h, request(scheduler_hints={"same_host": ("a", "b")}))
    assert not same.host_passes(h, request(scheduler_hints={"same_host": ("b",)}))
    assert not different.host_passes(h, request(scheduler_hints={"different_host": ("a",)}))
    assert different.host_passes(h, request(scheduler_hints={"different_host": ("b",)}))


def with_specs(**specs: str) -> SchedulingRequest:
    return SchedulingRequest(flavor=FlavorRequest(vcpus=1, memory_mb=1, extra_specs=specs))


def test_compute_capabilities_filter() -> None:
    check = ComputeCapabilitiesFilter(SETTINGS)
    h = host(
        hypervisor_type="QEMU",
        vcpus_total=8,
        cpu_info={"maxphysaddr": {"bits": 46}},
        stats={"gpu": "yes"},
    )
    assert check.host_passes(h, with_specs())
    assert check.host_passes(h, with_specs(**{"capabilities:hypervisor_type": "QEMU"}))
    assert not check.host_passes(h, with_specs(**{"capabilities:hypervisor_type": "xen"}))
    assert check.host_passes(h, with_specs(**{"capabilities:vcpus_total": ">= 4"}))
    assert not check.host_passes(h, with_specs(**{"capabilities:vcpus_total": ">= 16"}))
    assert check.host_passes(h, with_specs(**{"capabilities:cpu_info:maxphysaddr:bits": "46"}))
    assert not check.host_passes(h, with_specs(**{"hw:maxphysaddr_bits": "48"}))
    assert check.host_passes(h, with_specs(gpu="yes", **{"hw:cpu_policy": "dedicated"}))
    assert not check.host_passes(h, with_specs(gpu="no"))
    assert not check.host_passes(h, with_specs(**{"capabilities:missing": "1"}))


@pytest.mark.parametrize(
    ("value", "requirement", "expected"),
    [
        ("4", "= 2", True),
        ("1", "= 2", False),
        ("abc", "<in> b", True),
        ("a", "<or> b <or> a", True),
        ("c", "<or> b <or> a", False),
        ("x", "s== x", True),
        ("x", "s!= x", False),
        ("2", "== 2", True),
        ("plain", "plain", True),
        ("abc", "<all-in> a c", True),
    ],
)
def test_extra_spec_operators(value: str, requirement: str, expected: bool) -> None:
    assert matches(value, requirement) is expected


def test_load_filters_and_once_per_request() -> None:
    loaded = load_filters(
        [
            "ComputeFilter",
            "nova.scheduler.filters.NUMATopologyFilter",
            "ServerGroupAntiAffinityFilter",
        ],
        SETTINGS,
    )
    assert [type(f).__name__ for f in loaded] == ["ComputeFilter", "ServerGroupAntiAffinityFilter"]
    with pytest.raises(
        FilterNotFound, match=r"Scheduler Host Filter NoSuchFilter could not be found\."
    ):
        load_filters(["NoSuchFilter"], SETTINGS)
    down = host("h2", service=ServiceState(disabled=True))
    assert filter_hosts(loaded, [host(), down], request()) == [host()]
    # ComputeFilter runs once per request: later instances do not re-run it
    assert [h.host for h in filter_hosts(loaded, [host(), down], request(), index=1)] == [
        "h1",
        "h2",
    ]
