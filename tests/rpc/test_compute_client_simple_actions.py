"""ComputeRpcClient's pause/unpause, suspend/resume and inject_network_info: Nova's method
names, the instance's host as target, version 6.0 (5.0 under a pre-Wallaby cap), both
transports."""

from __future__ import annotations

import pytest

from openkeel.rpc import InvalidTarget, Target
from openkeel.rpc.clients import ComputeRpcClient, compute
from tests.rpc.conftest import Transports
from tests.rpc.test_clients import CTX, WAIT, Instance, Recorder, Serve, serve

__all__ = ["serve"]

METHODS = [
    "pause_instance",
    "unpause_instance",
    "suspend_instance",
    "resume_instance",
    "inject_network_info",
]


@pytest.mark.parametrize("method", METHODS)
def test_casts_to_the_instance_host(serve: Serve, transports: Transports, method: str) -> None:
    endpoint = Recorder(compute.SERVER_VERSION)
    other = Recorder(compute.SERVER_VERSION)
    server = serve(Target("compute", server="h1"), endpoint)
    serve(Target("compute", server="h2"), other)
    client = ComputeRpcClient(transports.new(), timeout=WAIT)
    getattr(client, method)(CTX, Instance("i-1", "h1"))
    assert endpoint.wait() == [(method, {"instance": {"uuid": "i-1", "host": "h1"}})]
    assert server.versions == ["6.0"]
    assert other.received == []


@pytest.mark.parametrize("method", METHODS)
def test_capped_to_5_0_and_needs_a_host(serve: Serve, transports: Transports, method: str) -> None:
    endpoint = Recorder("5.13")
    server = serve(Target("compute", server="h1"), endpoint)
    client = ComputeRpcClient(transports.new(), version_cap="queens", timeout=WAIT)
    getattr(client, method)(CTX, Instance("i-1", "h1"))
    assert endpoint.wait() == [(method, {"instance": {"uuid": "i-1", "host": "h1"}})]
    assert server.versions == ["5.0"]
    with pytest.raises(InvalidTarget, match=r"^No compute host specified$"):
        getattr(client, method)(CTX, Instance("i-1", None))
