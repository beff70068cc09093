"""The stop of a role process on SIGTERM/SIGINT (openkeel.runtime.shutdown, decision 0066):
the first signal asks for a stop, a second or the overall timeout ends the process at once,
and the work's timeout stays below the overall one as Nova keeps it."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from openkeel.conf import make_config
from openkeel.runtime.shutdown import ShutdownSignals, work_timeout


class Exits:
    """Stands in for ``os._exit``: records the status."""

    def __init__(self) -> None:
        self.status: list[int] = []
        self.called = threading.Event()

    def __call__(self, status: int) -> None:
        self.status.append(status)
        self.called.set()


@pytest.fixture
def handlers() -> Iterator[None]:
    """Put back the process's own SIGTERM/SIGINT handlers after the test."""
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_nova_defaults() -> None:
    conf = make_config([])
    signals = ShutdownSignals.from_conf(conf)
    assert (signals.graceful, signals.work) == (180.0, 160.0)


@pytest.mark.parametrize(
    ("graceful", "manager", "work"), [(180, 160, 160), (30, 160, 20), (5, 160, 0), (0, 160, 160)]
)
def test_the_work_stops_before_the_process_must(graceful: int, manager: int, work: int) -> None:
    assert work_timeout(graceful, manager) == work


def test_the_first_signal_asks_the_second_ends_at_once(handlers: None) -> None:
    exits = Exits()
    signals = ShutdownSignals(0, 10, exit_now=exits).install()
    asked: list[str] = []
    signals.on_request(lambda: asked.append("stop"))

    os.kill(os.getpid(), signal.SIGTERM)
    assert signals.requested.wait(5)
    assert asked == ["stop"] and exits.status == []
    assert 0 < signals.work_left() <= 10

    os.kill(os.getpid(), signal.SIGINT)
    assert exits.called.wait(5)
    assert exits.status == [1]


def test_past_the_overall_timeout_the_process_ends(handlers: None) -> None:
    exits = Exits()
    signals = ShutdownSignals(0.01, 0, exit_now=exits)

    signals.request()

    assert exits.called.wait(5)
    assert exits.status == [1]


def test_a_process_that_stopped_in_time_is_left_alone() -> None:
    exits = Exits()
    signals = ShutdownSignals(0.05, 0, exit_now=exits)
    signals.finished()

    signals.request()

    assert not exits.called.wait(0.5)
