"""Fixtures of the KubeVirt driver tests on a real kube-apiserver (see kube_env)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openkeel.virt.kubevirt.driver import KubevirtDriver
from tests.virt.kubevirt import kube_env
from tests.virt.kubevirt.kube_env import KubeSession


@pytest.fixture
def kube() -> KubeSession:
    return kube_env.session()


@pytest.fixture
def driver(kube: KubeSession) -> Iterator[KubevirtDriver]:
    drv = kube.driver("host-a", kube.node_prefix())
    yield drv
    drv.cleanup_host("host-a")
