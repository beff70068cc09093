"""One in-process cloud per fuzz module (API, conductor, scheduler, two fake computes on the
in-process transport, embedded Placement) and the world of objects the fuzzer acts on."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.virt.fake import FakeDriver
from tests import leaks
from tests.conftest import make_services
from tests.functional.conftest import Cloud, start_cloud, stop_cloud
from tests.fuzz.world import World


@pytest.fixture(scope="package")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPlacement]:
    embedded = EmbeddedPlacement(tmp_path_factory.mktemp("placement")).start()
    yield embedded
    embedded.stop()


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, placement: EmbeddedPlacement
) -> Iterator[World]:
    """The cloud and its objects; each test calls ``ensure`` first."""
    services = make_services(tmp_path_factory.mktemp("fuzz"))
    cloud = start_cloud(services, placement, "inproc://fuzz")
    cloud.add_compute("fuzz-host1")
    cloud.add_compute("fuzz-host2")
    built = World(cloud, "fuzz-host1")
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    raw = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    built.extra["public_key"] = raw.decode()
    # The roles' RPC dispatch threads start on demand, during any test: they are this cloud's.
    owner = leaks.owned_by("the fuzz cloud's RPC threads", list, _rpc_threads)
    # Asking for a console starts the simulated guest's console server, during any test.
    consoles = leaks.owned_by(
        "the fuzz cloud's guest consoles",
        lambda: [s for d in _drivers(cloud) for s in d.consoles.held()[0]],
        lambda: [t for d in _drivers(cloud) for t in d.consoles.held()[1]],
    )
    built.ensure()
    yield built
    stop_cloud(cloud)
    leaks.released(consoles)
    leaks.released(owner)


def _drivers(cloud: Cloud) -> list[FakeDriver]:
    return [c.host.driver for c in cloud.computes.values() if isinstance(c.host.driver, FakeDriver)]


def _rpc_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rpc-")]
