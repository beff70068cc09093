"""Messaging behaviour, the same tests on the in-process and the RabbitMQ transport."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import pytest

from openkeel.domain.errors import NotFound, PolicyNotAuthorized
from openkeel.rpc import (
    CallContext,
    MessagingTimeout,
    NoSuchMethod,
    RemoteError,
    RpcClient,
    RpcServer,
    Target,
    UnsupportedVersion,
)
from openkeel.rpc.transport import Transport
from tests.rpc.conftest import Transports

CTX = CallContext(user_id="alice", project_id="p1", roles=("member", "reader"), request_id="req-1")
WAIT = 10.0


class Calculator:
    """Test endpoint at API version 1.3."""

    rpc_version: ClassVar[str] = "1.3"

    def __init__(self, name: str = "calc", parties: int = 1) -> None:
        self.name = name
        self.seen: list[object] = []
        self.calls = 0
        self.arrived = threading.Event()
        self.barrier = threading.Barrier(parties, timeout=WAIT)
        self.release = threading.Event()

    def add(self, context: CallContext, a: int, b: int) -> int:
        return a + b

    def whoami(self, context: CallContext) -> dict[str, object]:
        self.calls += 1
        return {"context": context.to_dict(), "server": self.name}

    def remember(self, context: CallContext, value: object) -> None:
        self.seen.append(value)
        self.arrived.set()

    def rendezvous(self, context: CallContext) -> int:
        return self.barrier.wait()

    def hang(self, context: CallContext) -> str:
        self.release.wait(WAIT)
        return "released"

    def lookup(self, context: CallContext, server_id: str) -> None:
        raise NotFound(f"Instance {server_id} could not be found.")

    def forbid(self, context: CallContext) -> None:
        raise PolicyNotAuthorized("os_compute_api:servers:show")

    def explode(self, context: CallContext) -> None:
        raise ValueError("boom")


class Tasks:
    """A second endpoint on the same topic, in its own namespace (like ``compute_task``)."""

    rpc_version: ClassVar[str] = "1.0"
    rpc_namespace: ClassVar[str] = "tasks"

    def add(self, context: CallContext, a: int, b: int) -> str:
        return f"tasks:{a + b}"


@dataclass(frozen=True)
class Flavor:
    """A typed payload."""

    name: str
    vcpus: int

    def to_primitive(self) -> dict[str, object]:
        return {"name": self.name, "vcpus": self.vcpus}


Serve = Callable[..., RpcServer]


@pytest.fixture
def serve(transports: Transports, stoppers: list[Callable[[], None]]) -> Serve:
    def start(topic: str, *endpoints: object, server: str | None = None) -> RpcServer:
        rpc_server = RpcServer(transports.new(), Target(topic, server=server), endpoints)
        stoppers.append(rpc_server.stop)
        return rpc_server.start()

    return start


@pytest.fixture
def caller(transports: Transports) -> Transport:
    return transports.new()


def client(transport: Transport, topic: str = "conductor", **kwargs: object) -> RpcClient:
    return RpcClient(transport, Target(topic, version="1.0"), timeout=WAIT, **kwargs)  # type: ignore[arg-type]


def served_by(rpc: RpcClient) -> object:
    answer = rpc.call(CTX, "whoami")
    assert isinstance(answer, dict)
    return answer["server"]


def test_call_returns_the_result(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    assert client(caller).call(CTX, "add", a=2, b=3) == 5


def test_call_carries_the_context(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    assert client(caller).call(CTX, "whoami") == {
        "context": {
            "user_id": "alice",
            "project_id": "p1",
            "roles": ["member", "reader"],
            "request_id": "req-1",
        },
        "server": "calc",
    }


def test_cast_runs_the_method(serve: Serve, caller: Transport) -> None:
    endpoint = Calculator()
    serve("conductor", endpoint, server="c1")
    client(caller).cast(CTX, "remember", value={"flavor": Flavor("m1", 2)})
    assert endpoint.arrived.wait(WAIT)
    assert endpoint.seen == [{"flavor": {"name": "m1", "vcpus": 2}}]


def test_fanout_cast_reaches_every_server(serve: Serve, caller: Transport) -> None:
    endpoints = [Calculator("s1"), Calculator("s2")]
    for endpoint in endpoints:
        serve("scheduler", endpoint, server=endpoint.name)
    client(caller, "scheduler").prepare(fanout=True).cast(CTX, "remember", value="aggregates")
    for endpoint in endpoints:
        assert endpoint.arrived.wait(WAIT)
        assert endpoint.seen == ["aggregates"]


def test_each_topic_message_is_handled_by_exactly_one_server(
    serve: Serve, caller: Transport
) -> None:
    endpoints = [Calculator("s1"), Calculator("s2")]
    for endpoint in endpoints:
        serve("scheduler", endpoint, server=endpoint.name)
    rpc = client(caller, "scheduler")
    servers = [served_by(rpc) for _ in range(6)]
    assert set(servers) <= {"s1", "s2"}
    assert [endpoint.calls for endpoint in endpoints] == [
        servers.count("s1"),
        servers.count("s2"),
    ]


def test_server_targeted_topic(serve: Serve, caller: Transport) -> None:
    for host in ("host1", "host2"):
        serve("compute", Calculator(host), server=host)
    rpc = client(caller, "compute")
    for host in ("host2", "host1", "host2"):
        assert served_by(rpc.prepare(server=host)) == host


def test_compute_alt_topic_is_separate(serve: Serve, caller: Transport) -> None:
    serve("compute", Calculator("main"), server="host1")
    serve("compute-alt", Calculator("alt"), server="host1")
    rpc = client(caller, "compute").prepare(server="host1")
    assert served_by(rpc) == "main"
    assert served_by(rpc.prepare(topic="compute-alt")) == "alt"


def test_call_without_server_times_out(caller: Transport) -> None:
    rpc = client(caller, "nobody").prepare(timeout=0.2)
    with pytest.raises(MessagingTimeout, match=r"^Timed out waiting for a reply to message ID "):
        rpc.call(CTX, "add", a=1, b=2)


def test_slow_server_times_out(serve: Serve, caller: Transport) -> None:
    endpoint = Calculator()
    serve("conductor", endpoint, server="c1")
    with pytest.raises(MessagingTimeout):
        client(caller).prepare(timeout=0.2).call(CTX, "hang")
    endpoint.release.set()
    assert client(caller).call(CTX, "add", a=1, b=1) == 2


def test_remote_domain_error_is_reraised(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    with pytest.raises(NotFound) as raised:
        client(caller).call(CTX, "lookup", server_id="abc")
    assert raised.value.message == "Instance abc could not be found."
    assert str(raised.value) == "Instance abc could not be found."
    with pytest.raises(PolicyNotAuthorized) as forbidden:
        client(caller).call(CTX, "forbid")
    assert forbidden.value.message == (
        "Policy doesn't allow os_compute_api:servers:show to be performed."
    )
    assert forbidden.value.code == 403


def test_unknown_remote_error_becomes_remote_error(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    with pytest.raises(RemoteError) as raised:
        client(caller).call(CTX, "explode")
    assert str(raised.value) == "Remote error: ValueError boom"
    assert (raised.value.exc_type, raised.value.value) == ("ValueError", "boom")


def test_unknown_method(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    with pytest.raises(NoSuchMethod, match=r"^Endpoint does not support RPC method nope$"):
        client(caller).call(CTX, "nope")
    with pytest.raises(NoSuchMethod):
        client(caller).call(CTX, "_private")


def test_server_refuses_newer_versions(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    rpc = client(caller)
    assert rpc.prepare(version="1.3").call(CTX, "add", a=1, b=1) == 2
    for version in ("1.4", "2.0"):
        with pytest.raises(UnsupportedVersion) as raised:
            rpc.prepare(version=version).call(CTX, "add", a=1, b=1)
        assert str(raised.value) == (
            f"Endpoint does not support RPC version {version}. Attempted method: add"
        )


def test_version_cap_negotiation(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), server="c1")
    rpc = client(caller, version_cap="1.2")
    assert [rpc.can_send_version(v) for v in ("1.0", "1.2", "1.3", "2.0")] == [
        True,
        True,
        False,
        False,
    ]
    assert rpc.prepare(version="1.2").call(CTX, "add", a=1, b=1) == 2
    with pytest.raises(UnsupportedVersion) as raised:
        rpc.prepare(version="1.3").call(CTX, "add", a=1, b=1)
    assert str(raised.value) == (
        "Requested message version, 1.3 is incompatible. It needs to be equal in major version "
        "and less than or equal in minor version as the specified version cap 1.2."
    )
    assert client(caller).can_send_version("9.9")


def test_namespaces_select_the_endpoint(serve: Serve, caller: Transport) -> None:
    serve("conductor", Calculator(), Tasks(), server="c1")
    rpc = client(caller)
    assert rpc.call(CTX, "add", a=1, b=2) == 3
    tasks = RpcClient(caller, Target("conductor", version="1.0", namespace="tasks"), timeout=WAIT)
    assert tasks.call(CTX, "add", a=1, b=2) == "tasks:3"


def test_many_concurrent_calls(serve: Serve, caller: Transport) -> None:
    parties = 20
    serve("conductor", Calculator(parties=parties), server="c1")
    rpc = client(caller)
    with ThreadPoolExecutor(parties) as pool:
        arrivals = list(pool.map(lambda _: rpc.call(CTX, "rendezvous"), range(parties)))
    assert sorted(arrivals) == list(range(parties))  # type: ignore[type-var]


def test_nested_calls_do_not_deadlock(
    serve: Serve, caller: Transport, transports: Transports
) -> None:
    inner = client(transports.new(), "scheduler")

    class Relay:
        rpc_version: ClassVar[str] = "1.0"

        def relay(self, context: CallContext, a: int) -> object:
            return inner.call(context, "add", a=a, b=100)

    serve("scheduler", Calculator(), server="s1")
    serve("conductor", Relay(), server="c1")
    assert client(caller).call(CTX, "relay", a=1) == 101


def test_unserializable_argument_is_refused(caller: Transport) -> None:
    with pytest.raises(TypeError, match=r"^object cannot be sent over RPC$"):
        client(caller).cast(CTX, "remember", value=object())


def test_calls_work_again_after_connection_loss(
    serve: Serve, caller: Transport, transports: Transports
) -> None:
    endpoint = Calculator()
    serve("conductor", endpoint, server="c1")
    rpc = client(caller).prepare(timeout=30)
    assert rpc.call(CTX, "add", a=1, b=1) == 2
    transports.drop_connections()
    assert rpc.call(CTX, "add", a=2, b=2) == 4
    rpc.cast(CTX, "remember", value="after")
    assert endpoint.arrived.wait(WAIT)
    assert endpoint.seen == ["after"]


def test_cast_to_a_stopped_server_waits_for_its_restart(serve: Serve, caller: Transport) -> None:
    """A queue outlives its consumer (RabbitMQ semantics, mirrored in-process): a compute role
    restarted in the same process gets the builds cast to it meanwhile."""
    first = Calculator("c1")
    serve("compute", first, server="c1").stop()
    client(caller, "compute").prepare(server="c1").cast(CTX, "remember", value="while down")
    again = Calculator("c1")
    serve("compute", again, server="c1")
    assert again.arrived.wait(WAIT)
    assert again.seen == ["while down"]
    assert first.seen == []
