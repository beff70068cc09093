"""Driver factories for the virt contract suite: add a driver by adding one entry to DRIVERS."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


def _kubevirt(host: str) -> ComputeDriver:
    """KubevirtDriver on the real kube-apiserver with the test-side KubeVirt simulator;
    skipped (failed under CI) when the server is not answering."""
    from tests.virt.kubevirt import kube_env

    kube = kube_env.session()
    return kube.driver(host, _NODE_PREFIX.setdefault("current", kube.node_prefix()))


_NODE_PREFIX: dict[str, str] = {}  # per test: hosts of one test share fresh, empty nodes

# name -> factory(host) returning an initialised driver for that compute host.
DRIVERS: dict[str, DriverFactory] = {"fake": _fake, "fake-limited": _fake_limited, "kubevirt": _kubevirt}  # fmt: skip


@pytest.fixture(params=sorted(DRIVERS))
def make_driver(request: pytest.FixtureRequest) -> DriverFactory:
    factory: DriverFactory = DRIVERS[request.param]
    _NODE_PREFIX.clear()
    return factory


@pytest.fixture
def driver(make_driver: DriverFactory) -> Iterator[ComputeDriver]:
    made = make_driver("host-a")
    yield made
    made.cleanup_host("host-a")  # what a stopping compute service does (closes consoles)
