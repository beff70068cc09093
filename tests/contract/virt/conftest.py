"""Driver factories for the virt contract suite: add a driver by adding one entry to DRIVERS."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openkeel.virt.driver import ComputeDriver
from openkeel.virt.fake import FakeDriver, FakeDriverConfig

DriverFactory = Callable[[str], ComputeDriver]


def _fake(host: str) -> ComputeDriver:
    driver = FakeDriver(sleep=lambda _s: None)
    driver.init_host(host)
    return driver


def _fake_limited(host: str) -> ComputeDriver:
    """A fake that declares KubeVirt's gaps (no managed save, no rescue) as unsupported."""
    unsupported = frozenset({"suspend", "resume", "rescue", "unrescue", "trigger_crash_dump"})
    driver = FakeDriver(FakeDriverConfig(unsupported=unsupported), sleep=lambda _s: None)
    driver.init_host(host)
    return driver


# name -> factory(host) returning an initialised driver for that compute host.
DRIVERS: dict[str, DriverFactory] = {"fake": _fake, "fake-limited": _fake_limited}


@pytest.fixture(params=sorted(DRIVERS))
def make_driver(request: pytest.FixtureRequest) -> DriverFactory:
    factory: DriverFactory = DRIVERS[request.param]
    return factory


@pytest.fixture
def driver(make_driver: DriverFactory) -> ComputeDriver:
    return make_driver("host-a")
