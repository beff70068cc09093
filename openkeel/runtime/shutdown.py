"""Graceful stop of a role process on SIGTERM or SIGINT, as oslo.service stops Nova's services.

The composition roots (``openkeel.cmd``: each role, the API, the all-in-one) install one
``ShutdownSignals``. The first signal asks the process to stop: ``requested`` is set and the
callbacks run (the API server stops accepting connections). The process then stops taking work
and gives what it has in hand until ``work_left()`` runs out (Nova's ``[DEFAULT]
manager_shutdown_timeout``, kept below the overall timeout as Nova does). Past ``[DEFAULT]
graceful_shutdown_timeout`` (0: no limit), or at a second signal, it exits at once with status 1;
what was cut off is settled by the next start's reconciliation, never left to hang. The HTTP
roles (api, metadata) serve with ``SignalledServer``, a uvicorn server stopped by these signals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

import uvicorn
from oslo_config import cfg

LOG = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGINT)
# What Nova keeps between the work's timeout and the overall one when they are misconfigured.
CLEANUP_MARGIN = 10.0


def work_timeout(graceful: float, manager: float) -> float:
    """How long the work in hand may take: ``manager``, unless that would outlast the overall
    ``graceful`` timeout (then ``graceful`` less Nova's 10 s margin; 0 means no overall limit)."""
    if graceful and manager > graceful:
        LOG.warning("manager_shutdown_timeout (%s) is above graceful_shutdown_timeout (%s): "
                    "the work gets %s s", manager, graceful, max(0.0, graceful - CLEANUP_MARGIN))  # fmt: skip
        return max(0.0, graceful - CLEANUP_MARGIN)
    return manager


class ShutdownSignals:
    """SIGTERM/SIGINT handling of one process (install from the main thread)."""

    def __init__(
        self, graceful: float, manager: float, *, exit_now: Callable[[int], object] = os._exit
    ) -> None:
        self.graceful = graceful
        self.work = work_timeout(graceful, manager)
        self.requested = threading.Event()
        self._done = threading.Event()
        self._exit_now = exit_now
        self._callbacks: list[Callable[[], None]] = []
        self._started: float | None = None

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> ShutdownSignals:
        """With ``[DEFAULT] graceful_shutdown_timeout`` and ``manager_shutdown_timeout``."""
        return cls(float(conf.graceful_shutdown_timeout), float(conf.manager_shutdown_timeout))

    def install(self) -> ShutdownSignals:
        """Handle SIGTERM and SIGINT in this process from now on."""
        for signum in SIGNALS:
            signal.signal(signum, self._on_signal)
        return self

    def on_request(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (in the signal handler: it must be quick) at the first signal."""
        self._callbacks.append(callback)

    def wait(self) -> None:
        """Block until the first signal."""
        while not self.requested.wait(1.0):
            pass  # a bounded wait keeps the main thread where signal handlers can run

    def work_left(self) -> float:
        """Seconds the work in hand may still take (all of it before any signal)."""
        if self._started is None:
            return self.work
        return max(0.0, self.work - (time.monotonic() - self._started))

    def finished(self) -> None:
        """The process stopped within its time: the watchdog stands down."""
        self._done.set()

    def request(self, signum: int = signal.SIGTERM) -> None:
        """What the first signal does (the handler calls it; tests may too)."""
        self._started = time.monotonic()
        LOG.info("%s received: stopping (the work in hand gets %.0f s)",
                 signal.Signals(signum).name, self.work)  # fmt: skip
        self.requested.set()
        if self.graceful:
            threading.Thread(target=self._watchdog, name="shutdown-watchdog", daemon=True).start()
        for callback in self._callbacks:
            callback()

    def abandon(self) -> None:
        """Exit at once with status 1, leaving the work that outlived its time (its threads
        would otherwise hold the interpreter's exit until they end); logs are flushed."""
        self.exit_now(1)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.requested.is_set():
            LOG.warning("%s received again: exiting at once", signal.Signals(signum).name)
            self.exit_now(1)
            return
        self.request(signum)

    def _watchdog(self) -> None:
        if not self._done.wait(self.graceful):
            LOG.error("Still stopping after graceful_shutdown_timeout (%s s): exiting at once",
                      self.graceful)  # fmt: skip
            self.exit_now(1)

    def exit_now(self, status: int) -> None:
        """End the process with ``status`` without waiting for anything (logs flushed)."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed: nothing more to lose
                stream.flush()
        for handler in logging.getLogger().handlers:
            handler.flush()
        self._exit_now(status)


class SignalledServer(uvicorn.Server):
    """A uvicorn server whose stop the process's ``ShutdownSignals`` decides: uvicorn's own
    signal handling would re-raise the signal once served (the process would die of it rather
    than exit 0) and would not count a second SIGTERM."""

    def __init__(self, config: uvicorn.Config, signals: ShutdownSignals) -> None:
        super().__init__(config)
        self._accepting = True
        signals.on_request(self.begin_stop)

    def begin_stop(self) -> None:
        """Stop accepting connections; requests in progress are answered (up to the
        config's ``timeout_graceful_shutdown``), idle keep-alive connections closed."""
        self.should_exit = True

    def stop_accepting(self, sockets: list[socket.socket] | None = None) -> None:
        """Close the listening sockets, then log it (once): a new connection is refused from
        that line on. The signal only asks; uvicorn's loop notices within its tick."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        if self._accepting:
            self._accepting = False
            LOG.info("No longer accepting connections")

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.stop_accepting(sockets)
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
