"""A graceful stop of an RPC server (decision 0066): it takes no more messages, answers those
in hand within a timeout, and the broker keeps the later ones; follow-ups of operations in
progress go to ``compute-alt``, which a stopping host still serves. On both transports."""

from __future__ import annotations

import threading
from collections.abc import Callable

from openkeel.rpc import CallContext, RpcServer, Target
from openkeel.rpc.client import RpcClient
from openkeel.rpc.clients import ComputeRpcClient, compute
from openkeel.rpc.messages import compute as cm
from openkeel.rpc.server import wait_quiet
from tests.rpc.conftest import Transports
from tests.rpc.test_clients import CTX, WAIT, Recorder, Serve, serve

__all__ = ["serve"]


class Gate:
    """Endpoint whose ``work`` blocks until ``release`` is set; ``entered`` says it runs."""

    rpc_version = "1.0"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.done: list[str] = []

    def work(self, context: CallContext, name: str) -> None:
        self.entered.set()
        assert self.release.wait(WAIT)
        self.done.append(name)


def _gated(
    transports: Transports, stoppers: list[Callable[[], None]], name: str
) -> tuple[Gate, RpcServer, RpcClient]:
    """A server of a ``Gate`` that runs the message ``name``; a client of its target."""
    gate = Gate()
    server = RpcServer(transports.new(), Target("work", server="s1"), [gate]).start()
    stoppers.append(server.stop)
    client = RpcClient(transports.new(), Target("work", server="s1"))
    client.cast(CTX, "work", name=name)
    assert gate.entered.wait(WAIT)
    return gate, server, client


def test_a_graceful_stop_answers_what_it_holds_and_leaves_the_rest_queued(
    transports: Transports, stoppers: list[Callable[[], None]]
) -> None:
    gate, server, client = _gated(transports, stoppers, "in hand")

    server.stop_listening()
    client.cast(CTX, "work", name="later")
    assert server.busy == 1
    gate.release.set()

    assert server.stop(timeout=WAIT) is True
    assert gate.done == ["in hand"]
    # The message sent after the stop waited for the next server of the target.
    successor = Gate()
    successor.release.set()
    again = RpcServer(transports.new(), Target("work", server="s1"), [successor]).start()
    stoppers.append(again.stop)
    assert wait_quiet([again], WAIT) and successor.entered.wait(WAIT)
    assert successor.done == ["later"]


def test_a_graceful_stop_gives_up_at_its_timeout(
    transports: Transports, stoppers: list[Callable[[], None]]
) -> None:
    gate, server, _ = _gated(transports, stoppers, "stuck")

    assert server.stop(timeout=0) is False

    gate.release.set()  # the abandoned call ends when it ends; the server is gone
    assert server.busy <= 1


def test_follow_ups_of_running_operations_go_to_compute_alt(
    serve: Serve, transports: Transports
) -> None:
    main, alt = Recorder(compute.SERVER_VERSION), Recorder(compute.SERVER_VERSION)
    serve(Target("compute", server="h1"), main)
    serve(Target(compute.ALT_TOPIC, server="h1"), alt)
    client = ComputeRpcClient(transports.new(), timeout=WAIT)

    client.cast(CTX, "h1", cm.FinishResize("i-1", migration={"id": 1}))
    client.cast(CTX, "h1", cm.StopInstance("i-1"))

    assert [name for name, _ in alt.wait()] == ["finish_resize"]
    assert [name for name, _ in main.wait()] == ["stop_instance"]


def test_hosts_of_an_older_release_get_follow_ups_on_compute(
    serve: Serve, transports: Transports
) -> None:
    main = Recorder("6.4")
    serve(Target("compute", server="h1"), main)
    client = ComputeRpcClient(transports.new(), version_cap="flamingo", timeout=WAIT)

    client.cast(CTX, "h1", cm.FinishResize("i-1", migration={"id": 1}))

    assert [name for name, _ in main.wait()] == ["finish_resize"]
