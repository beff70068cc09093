"""Fixtures running every messaging test on both transports: in-process and RabbitMQ.

RabbitMQ is expected at 127.0.0.1:5672 (guest/guest): unreachable skips locally and fails when
the ``CI`` environment variable is set. Each test gets its own exchange
``openkeel_test_<random>``, which also prefixes every queue, so tests never meet each other or a
real Nova on the broker's default vhost.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from openkeel.rpc.inproc import InprocTransport
from openkeel.rpc.rabbit import RabbitTransport
from openkeel.rpc.transport import Transport

RABBIT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
RABBIT_ADDRESS = ("127.0.0.1", 5672)


def _rabbit_problem() -> str | None:
    try:
        with socket.create_connection(RABBIT_ADDRESS, timeout=1):
            return None
    except OSError as exc:
        return str(exc)


@dataclass
class Transports:
    """Makes transports on one broker/exchange (like separate processes) and closes them."""

    kind: str
    exchange: str = field(default_factory=lambda: f"openkeel_test_{uuid.uuid4().hex[:12]}")
    made: list[Transport] = field(default_factory=list)

    def new(self) -> Transport:
        transport: Transport
        if self.kind == "rabbit":
            transport = RabbitTransport(RABBIT_URL, exchange=self.exchange, queue_expiry=60)
        else:
            transport = InprocTransport(f"inproc://{self.exchange}", exchange=self.exchange)
        self.made.append(transport)
        return transport

    def drop_connections(self) -> None:
        """Cut every broker connection under the transports' feet (nothing to cut in-process)."""
        for transport in self.made:
            if isinstance(transport, RabbitTransport):
                for connection in transport.connections():
                    connection.connection.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        for transport in reversed(self.made):
            transport.close()


@pytest.fixture(params=["inproc", "rabbit"])
def transports(request: pytest.FixtureRequest) -> Iterator[Transports]:
    """Transport factory for the transport kind under test."""
    kind: str = request.param
    if kind == "rabbit":
        problem = _rabbit_problem()
        if problem is not None:
            message = (
                f"RabbitMQ not reachable at 127.0.0.1:5672 — start it or run in CI ({problem})"
            )
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
    made = Transports(kind)
    yield made
    made.close()


@pytest.fixture
def stoppers() -> Iterator[list[Callable[[], None]]]:
    """Callbacks (server stops) run at teardown, last registered first."""
    registered: list[Callable[[], None]] = []
    yield registered
    for stop in reversed(registered):
        stop()
