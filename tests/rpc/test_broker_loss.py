"""Casts survive RabbitMQ losing a server's queue (a broker restart drops non-durable queues).

Until the server's consumer reconnects and declares its queue again, a cast routed to the
topic exchange finds no queue and RabbitMQ drops it: the role never hears of a delete, a stop,
a resize it was told to do, and the server stays in that task state for good (seen in
tests/faults with ``rabbitmqctl stop_app/start_app``). The sender declares the queue it sends to,
so the message waits there for the server, as the transport promises.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kombu.connection import Connection

from openkeel.rpc import errors, rabbit
from openkeel.rpc.rabbit import kombu_url
from openkeel.rpc.transport import Transport
from tests.rpc.conftest import RABBIT_URL, Transports
from tests.rpc.test_messaging import CTX, WAIT, Calculator, caller, client, serve

__all__ = ["caller", "serve"]


def _lose_queue(name: str) -> None:
    """What a broker restart does to a non-durable queue."""
    with Connection(kombu_url(RABBIT_URL)) as connection:
        connection.default_channel.queue_delete(name)


def test_a_cast_waits_for_its_server_even_if_the_broker_lost_its_queue(
    serve: Callable[..., object], caller: Transport, transports: Transports
) -> None:
    if transports.kind != "rabbit":
        pytest.skip("in-process queues cannot be lost")
    first = Calculator("c1")
    serve("compute", first, server="c1").stop()  # type: ignore[attr-defined]
    _lose_queue(f"{transports.exchange}.compute.c1")
    client(caller, "compute").prepare(server="c1").cast(CTX, "remember", value="after the loss")
    again = Calculator("c1")
    serve("compute", again, server="c1")
    assert again.arrived.wait(WAIT), "the cast was dropped: no queue existed when it was sent"
    assert again.seen == ["after the loss"]


def test_a_send_to_an_unreachable_broker_is_a_messaging_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broker that cannot be reached at all (down, not just dropping a connection) fails the
    send with MessagingError, which the API answers 503, not with kombu's own error (a 500)."""
    monkeypatch.setattr(rabbit, "PUBLISH_ATTEMPTS", 2)
    publisher = rabbit._Publisher("amqp://guest:guest@127.0.0.1:1//")  # nothing listens on 1
    with pytest.raises(errors.MessagingError, match="Cannot reach RabbitMQ"):
        publisher.publish(b"{}", None, "nobody")
