"""FakeDriver knobs beyond the shared contract: delays, injected failures, host defaults."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.config_drive import read_iso, volume_label
from openkeel.virt.fake import FakeDriver, FakeDriverConfig, InjectedFailure
from openkeel.virt.model import InventoryPolicy, LifecycleEvent, LifecycleTransition
from tests.contract.virt.test_driver_contract import make_spec

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_defaults_match_novas_fake_driver() -> None:
    res = FakeDriver().get_available_resource("fake-mini")
    assert (res.vcpus, res.memory_mb, res.local_gb) == (1000, 800000, 600000)
    assert (res.hypervisor_type, res.hypervisor_version, res.vcpus_used) == ("fake", 1000, 0)
    with pytest.raises(errors.PermanentDriverError):
        FakeDriver().get_available_resource("other")


def test_host_size_is_configurable() -> None:
    driver = FakeDriver(FakeDriverConfig(nodes=("n1",), vcpus=8, memory_mb=4096, local_gb=40))
    inv = driver.get_inventory("n1", InventoryPolicy(cpu_allocation_ratio=16.0))
    assert (inv.inventories["VCPU"].total, inv.inventories["VCPU"].allocation_ratio) == (8, 16.0)
    assert inv.inventories["MEMORY_MB"].max_unit == 4096


def test_delays_go_through_the_injected_sleep() -> None:
    slept: list[float] = []
    driver = FakeDriver(FakeDriverConfig(delays={"spawn": 2.5, "pause": 0.5}), sleep=slept.append)
    spec = make_spec()
    driver.spawn(spec)
    driver.pause(spec.ref)
    driver.unpause(spec.ref)
    assert slept == [2.5, 0.5]


def test_fail_spawn_for_is_permanent() -> None:
    spec = make_spec()
    driver = FakeDriver(FakeDriverConfig(fail_spawn_for=frozenset({spec.uuid})))
    with pytest.raises(errors.PermanentDriverError) as info:
        driver.spawn(spec)
    assert info.value.message == f"Injected spawn failure for {spec.uuid}"
    assert not driver.instance_exists(spec.ref)
    driver.spawn(make_spec())  # other instances are unaffected


def test_transient_failure_counts_down_then_succeeds() -> None:
    spec = make_spec()
    failure = InjectedFailure("power_off", spec.uuid, transient=True, times=2)
    driver = FakeDriver(FakeDriverConfig(failures=(failure,)))
    driver.spawn(spec)
    for _ in range(2):
        with pytest.raises(errors.TransientDriverError):
            driver.power_off(spec.ref)
    driver.power_off(spec.ref)
    assert driver.get_info(spec.ref).state == PowerState.SHUTDOWN


def test_events_carry_the_injected_clock() -> None:
    seen: list[LifecycleEvent] = []
    driver = FakeDriver(clock=lambda: NOW)
    driver.register_event_listener(seen.append)
    spec = make_spec()
    driver.spawn(spec)
    assert seen == [LifecycleEvent(spec.uuid, LifecycleTransition.STARTED, NOW)]
    assert LifecycleTransition.MIGRATION_COMPLETED.title == "Migration completed"


def test_rescue_and_hotplug_are_visible_through_test_hooks() -> None:
    driver = FakeDriver()
    spec = make_spec()
    driver.spawn(spec)
    assert spec.image is not None
    driver.rescue(spec, spec.image, None)
    assert driver.is_rescued(spec.ref)
    driver.unrescue(spec.ref)
    assert not driver.is_rescued(spec.ref)
    assert driver.attached(spec.ref) == (frozenset(), frozenset({"p-1"}))


def test_unsupported_message() -> None:
    driver = FakeDriver(FakeDriverConfig(unsupported=frozenset({"suspend"})))
    with pytest.raises(errors.NotSupported) as info:
        driver.suspend(make_spec().ref)
    assert info.value.message == "suspend is not supported by the fake driver"


def test_config_drive_image_in_the_instances_directory(tmp_path: Path) -> None:
    driver = FakeDriver(FakeDriverConfig(instances_path=str(tmp_path)), sleep=lambda _s: None)
    files = (("openstack/latest/meta_data.json", b'{"uuid": "u"}'), ("ec2/latest/user-data", b"hi"))
    spec = replace(make_spec(), config_drive=True, config_drive_files=files)
    driver.spawn(spec)
    image = (tmp_path / spec.uuid / "disk.config").read_bytes()
    assert volume_label(image) == "config-2" and read_iso(image) == dict(files)
    plain = make_spec()
    driver.spawn(plain)
    assert driver.config_drive_path(plain.uuid) is not None
    assert not (tmp_path / plain.uuid).exists()
    driver.destroy(spec.ref)
    assert not (tmp_path / spec.uuid).exists()
    assert FakeDriver(sleep=lambda _s: None).config_drive_path(spec.uuid) is None
