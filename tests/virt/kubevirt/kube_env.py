"""The real kube-apiserver for KubeVirt driver tests: connection, skip/fail rule, fake Nodes.

Used by tests/virt/kubevirt/test_driver_k8s.py, the driver contract suite's ``kubevirt`` entry
and benchmarks/kubevirt_overhead.py. Start the server with ``bash scripts/start-kube-apiserver.sh``
(KUBECONFIG defaults to /tmp/k8s-try/kubeconfig). Unreachable: tests skip locally and fail when
the ``CI`` environment variable is set. One :class:`KubeSession` per process owns a namespace
prefix and a running :class:`Simulator`; it is stopped (watches joined, then the client
closed) at exit, and declared to the leak check (tests/leaks.py) as process-wide.
"""

from __future__ import annotations

import atexit
import itertools
import os
import secrets
from dataclasses import dataclass, field
from typing import NoReturn

import pytest

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from tests import leaks
from tests.virt.kubevirt.simulator import Simulator, StandInVirtApi

KUBECONFIG = os.environ.get("OPENKEEL_TEST_KUBECONFIG", "/tmp/k8s-try/kubeconfig")
HOW = "start it with `bash scripts/start-kube-apiserver.sh`"


def unavailable(reason: str) -> NoReturn:
    message = f"kube-apiserver not available ({reason}); {HOW}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def connect() -> k.KubeClient | None:
    if not os.path.exists(KUBECONFIG):
        return None
    try:
        client = k.KubeClient(k.KubeConfig.load(KUBECONFIG), timeout=10.0)
    except (OSError, k.KubeError):
        return None
    if not client.ready() or client.get_or_none(_CRDS, "virtualmachines.kubevirt.io") is None:
        client.close()
        return None
    return client


_CRDS = k.Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)  # fmt: skip


def ensure_node(
    client: k.KubeClient,
    name: str,
    *,
    cpu: str = "16",
    memory: str = "64Gi",
    storage: str = "500Gi",
    zone: str | None = None,
) -> k.JsonObj:
    """A Node object with allocatable resources (a bare API server has no kubelets)."""
    labels = {k.HOSTNAME_LABEL: name, "kubevirt.io/schedulable": "true"}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    client.ensure(k.NODES, {"metadata": {"name": name, "labels": labels}})
    resources = {"cpu": cpu, "memory": memory, "ephemeral-storage": storage, "pods": "110"}
    status = {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "nodeInfo": {"kernelVersion": "6.1.0-13-amd64"},
    }
    return client.patch(k.NODES, name, {"status": status}, sub="status")


@dataclass
class KubeSession:
    """Process-wide: client, namespace prefix, simulator, stand-in virt-api."""

    client: k.KubeClient
    prefix: str
    simulator: Simulator
    virt_api: StandInVirtApi
    _tests: itertools.count[int] = field(default_factory=itertools.count)

    @property
    def settings(self) -> KubevirtSettings:
        # the images namespace too carries the prefix: the simulator acts on it (clones)
        return KubevirtSettings(
            namespace_scheme=f"{self.prefix}{{project_id}}", images_namespace=f"{self.prefix}images"
        )

    def node_prefix(self) -> str:
        """A fresh node-name prefix, so each test's hosts start with empty nodes."""
        return f"{self.prefix}{next(self._tests)}-"

    def driver(self, host: str, node_prefix: str, *, watch_events: bool = False) -> KubevirtDriver:
        if self.client.get_or_none(k.NODES, node_prefix + host) is None:
            ensure_node(self.client, node_prefix + host)
        driver = KubevirtDriver(
            self.client,
            self.settings,
            self.virt_api,
            node_for_host=lambda h: node_prefix + h,
            wait_timeout=60.0,  # generous: CI shares two cores with everything else
            poll_interval=0.01,
            watch_events=watch_events,
        )
        driver.init_host(host)
        return driver


_SESSION: list[KubeSession] = []


def session() -> KubeSession:
    """The process's session; skips (fails under CI) when the server is not answering."""
    if _SESSION:
        return _SESSION[0]
    client = connect()
    if client is None:
        unavailable(f"no answer with {KUBECONFIG}")
    prefix = f"okt-{secrets.token_hex(3)}-"
    simulator = Simulator(client, prefix)
    # Process-wide (one simulator per process: starting it per test would relist four
    # resources each time); stopped at exit.
    reason = "the process-wide kube session: client pool and simulator watches"
    kube_sockets = leaks.kube_client_sockets(client)
    export_server = simulator.exports.server.socket.fileno()  # the stand-in export server
    leaks.owned_by(reason, lambda: [*kube_sockets(), export_server], simulator.threads)
    simulator.start()
    _SESSION.append(KubeSession(client, prefix, simulator, StandInVirtApi(client)))
    atexit.register(_close_session)
    return _SESSION[0]


def _close_session() -> None:
    """At exit: join the simulator's watches, then close the client they used."""
    for kube in _SESSION:
        kube.simulator.stop()
        kube.client.close()
    _SESSION.clear()
