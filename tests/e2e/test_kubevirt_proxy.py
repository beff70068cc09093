"""The test-side virt-api proxy itself: subresources, pass-through, streamed watches.

Checks :class:`~tests.e2e.kubevirt_proxy.VirtApiProxy` with the driver's own HTTP adapter
(:class:`~openkeel.virt.kubevirt.virtapi.HttpVirtApi`) against the real kube-apiserver, so the
all-in-one test can trust it. Skips locally (fails under ``CI``) without the API server.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.virtapi import HttpVirtApi
from tests import leaks
from tests.e2e.kubevirt_proxy import VirtApiProxy
from tests.virt.kubevirt import kube_env
from tests.virt.kubevirt.simulator import StandInVirtApi

NAMESPACE = "default"


@dataclass
class Proxied:
    real: k.KubeClient
    via_proxy: k.KubeClient
    virt_api: StandInVirtApi
    prefix: str


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    real = kube_env.connect()
    if real is None:
        kube_env.unavailable(f"no answer with {kube_env.KUBECONFIG}")
    prefix = f"okp-{secrets.token_hex(3)}-"
    virt_api = StandInVirtApi(real)
    proxy = VirtApiProxy(real.config, virt_api, node_prefix=prefix).start()
    path = proxy.kubeconfig(Path(tmp_path_factory.mktemp("proxy")) / "kubeconfig")
    via_proxy = k.KubeClient(k.KubeConfig.load(str(path)), timeout=10.0)
    clients = [
        leaks.owned_by("the module's kube clients", leaks.kube_client_sockets(c))
        for c in (real, via_proxy)
    ]
    try:
        yield Proxied(real, via_proxy, virt_api, prefix)
    finally:
        via_proxy.close()
        proxy.stop()
        real.close()
        for owner in clients:
            leaks.released(owner)


def test_kubeconfig_points_at_plain_http_without_credentials(proxied: Proxied) -> None:
    config = proxied.via_proxy.config
    assert config.server.startswith("http://127.0.0.1:")
    assert (config.token, config.cert_file, config.ca_file) == (None, None, None)
    assert proxied.via_proxy.ready()


def test_node_lists_show_only_the_test_nodes(proxied: Proxied) -> None:
    mine, other = f"{proxied.prefix}n1", f"x{proxied.prefix}n1"
    try:
        for name in (mine, other):
            kube_env.ensure_node(proxied.real, name)
        assert {mine, other} <= {n["metadata"]["name"] for n in proxied.real.items(k.NODES)}
        assert [n["metadata"]["name"] for n in proxied.via_proxy.items(k.NODES)] == [mine]
        assert proxied.via_proxy.get(k.NODES, other)["metadata"]["name"] == other
    finally:
        for name in (mine, other):
            proxied.real.delete(k.NODES, name)


def test_watch_events_stream_through(proxied: Proxied) -> None:
    """A watch left open for 60 s hands over the event at once (nothing is buffered)."""
    name = f"{proxied.prefix}watched"
    since = proxied.real.list(k.NODES)["metadata"]["resourceVersion"]
    kube_env.ensure_node(proxied.real, name)
    started = time.monotonic()
    try:
        with proxied.via_proxy.watch(k.NODES, since, timeout_seconds=60) as events:
            first = next(e for e in events if e["object"]["metadata"]["name"] == name)
    finally:
        proxied.real.delete(k.NODES, name)
    assert first["type"] == "ADDED"
    assert time.monotonic() - started < 10


def _vm(name: str) -> k.JsonObj:
    template = {"spec": {"domain": {"devices": {}, "memory": {"guest": "64Mi"}}}}
    return {"metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"runStrategy": "Manual", "template": template}}  # fmt: skip


def test_start_and_stop_requests_through_http_virt_api(proxied: Proxied) -> None:
    name = f"{proxied.prefix}vm"
    virt_api = HttpVirtApi(proxied.via_proxy)
    proxied.real.create(k.VMS, _vm(name))
    try:
        virt_api.start(NAMESPACE, name)
        stored = proxied.real.get(k.VMS, name, NAMESPACE)
        assert stored["status"]["stateChangeRequests"] == [{"action": "Start"}]
        with pytest.raises(k.ConflictError) as stop:
            virt_api.stop(NAMESPACE, name)
        assert (stop.value.status, stop.value.message) == (409, "VM is not running")
    finally:
        proxied.real.delete(k.VMS, name, NAMESPACE)
    assert proxied.virt_api.calls[-2:] == [("start", name), ("stop", name)]


def test_subresource_errors_are_kubernetes_statuses(proxied: Proxied) -> None:
    virt_api = HttpVirtApi(proxied.via_proxy)
    missing = f"{proxied.prefix}missing"
    with pytest.raises(k.NotFoundError) as start:
        virt_api.start(NAMESPACE, missing)
    assert start.value.message == f'virtualmachines.kubevirt.io "{missing}" not found'
    with pytest.raises(k.ConflictError) as pause:
        virt_api.pause(NAMESPACE, missing)
    assert pause.value.message == "VMI is not running"
    path = f"/apis/subresources.kubevirt.io/v1/namespaces/{NAMESPACE}/virtualmachines/{missing}"
    with pytest.raises(k.NotFoundError) as unknown:
        proxied.via_proxy.request("PUT", f"{path}/explode", {})
    assert unknown.value.message == "unknown subresource explode"
    with pytest.raises(k.KubeError) as method:
        proxied.via_proxy.request("GET", f"{path}/start")
    assert (method.value.status, method.value.reason) == (405, "MethodNotAllowed")
