"""Pause/unpause, suspend/resume and inject_network_info messages: Nova's method names, the
instance's host as target, version 6.0 (5.0 under a pre-Wallaby cap), both transports."""

from __future__ import annotations

import pytest

from openkeel.rpc import Target
from openkeel.rpc.clients import ComputeRpcClient, compute
from openkeel.rpc.messages import compute as cm
from tests.rpc.conftest import Transports
from tests.rpc.test_clients import CTX, WAIT, Recorder, Serve, serve

__all__ = ["serve"]

MESSAGES = [
    cm.PauseInstance,
    cm.UnpauseInstance,
    cm.SuspendInstance,
    cm.ResumeInstance,
    cm.InjectNetworkInfo,
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.method)
def test_casts_to_the_named_host(
    serve: Serve, transports: Transports, message: type[cm.InstanceMessage]
) -> None:
    endpoint = Recorder(compute.SERVER_VERSION)
    other = Recorder(compute.SERVER_VERSION)
    server = serve(Target("compute", server="h1"), endpoint)
    serve(Target("compute", server="h2"), other)
    client = ComputeRpcClient(transports.new(), timeout=WAIT)
    client.cast(CTX, "h1", message("i-1"))
    assert endpoint.wait() == [(message.method, {"instance_uuid": "i-1"})]
    assert server.versions == ["6.0"]
    assert other.received == []


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.method)
def test_capped_to_5_0(
    serve: Serve, transports: Transports, message: type[cm.InstanceMessage]
) -> None:
    endpoint = Recorder("5.13")
    server = serve(Target("compute", server="h1"), endpoint)
    client = ComputeRpcClient(transports.new(), version_cap="queens", timeout=WAIT)
    client.cast(CTX, "h1", message("i-1"))
    assert endpoint.wait() == [(message.method, {"instance_uuid": "i-1"})]
    assert server.versions == ["5.0"]
