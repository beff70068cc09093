"""Lines an RPC endpoint logs while it handles a message carry the sender's request id, user and
project (the CallContext the API passed on), on both transports."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import ClassVar

import pytest

from openkeel.logcontext import RequestContextFilter, current
from openkeel.rpc import CallContext, RpcClient, RpcServer, Target
from tests.rpc.conftest import Transports

LOG = logging.getLogger("tests.rpc.logged")
CTX = CallContext(user_id="alice", project_id="p1", roles=("member",), request_id="req-42")
WAIT = 10.0


class Logged:
    """An endpoint that logs (a cast that fails is logged by the server itself)."""

    rpc_version: ClassVar[str] = "1.0"

    def __init__(self) -> None:
        self.done = threading.Event()

    def work(self, context: CallContext) -> None:
        LOG.warning("working")

    def fail(self, context: CallContext) -> None:
        self.done.set()
        raise ValueError("boom")


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.handler.addFilter(RequestContextFilter())
    caplog.set_level(logging.INFO)
    return caplog


def _serve(
    transports: Transports, stoppers: list[Callable[[], None]], endpoint: Logged
) -> RpcClient:
    server = RpcServer(transports.new(), Target("logged", server="h1"), [endpoint]).start()
    stoppers.append(server.stop)
    return RpcClient(transports.new(), Target("logged", version="1.0"), timeout=WAIT)


def test_endpoint_lines_carry_the_callers_request(
    transports: Transports, stoppers: list[Callable[[], None]], logs: pytest.LogCaptureFixture
) -> None:
    client = _serve(transports, stoppers, Logged())
    client.call(CTX, "work")
    [record] = [r for r in logs.records if r.name == LOG.name]
    assert record.request_id == "req-42"  # type: ignore[attr-defined]
    assert record.user_identity == "alice p1"  # type: ignore[attr-defined]
    assert current() is None  # the caller's own context is untouched


def test_failed_cast_is_logged_with_the_request(
    transports: Transports, stoppers: list[Callable[[], None]], logs: pytest.LogCaptureFixture
) -> None:
    endpoint = Logged()
    client = _serve(transports, stoppers, endpoint)
    client.cast(CTX, "fail")
    assert endpoint.done.wait(WAIT)
    for server_stop in stoppers:
        server_stop()  # drains: the failure has been logged once stop returns
    stoppers.clear()
    [record] = [r for r in logs.records if r.levelno >= logging.ERROR]
    assert record.request_id == "req-42"  # type: ignore[attr-defined]
    assert record.exc_info is not None
