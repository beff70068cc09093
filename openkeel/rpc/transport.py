"""The transport interface both messaging back ends implement, and the URL-based factory.

``RpcClient`` sends through a ``Transport``; ``RpcServer`` listens through one. Nova's
``[DEFAULT] transport_url`` picks the implementation: ``inproc://[name]`` (embedded, one process)
or ``rabbit://user:pass@host:port/vhost`` (RabbitMQ through kombu).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from openkeel.rpc import errors
from openkeel.rpc.message import Message, Reply, Target


@dataclass(frozen=True)
class Incoming:
    """A message delivered to a server; ``reply`` answers it (a no-op for casts)."""

    message: Message
    reply: Callable[[Reply], None]


OnMessage = Callable[[Incoming], None]


class Listener(Protocol):
    """A server's subscription to its topic queues."""

    def stop(self) -> None:
        """Stop delivering messages; returns once no more deliveries start."""


class Transport(Protocol):
    """Moves messages between clients and servers."""

    # Whether a cast outlives the process that sent it (RabbitMQ queues it; the in-process
    # transport loses it with the process). The conductor's orphan sweep depends on it.
    durable: bool

    def call(self, target: Target, message: Message, timeout: float) -> Reply:
        """Send ``message`` to one server of ``target`` and wait for its reply.

        Raises ``MessagingTimeout`` when no reply arrives within ``timeout`` seconds.
        """

    def cast(self, target: Target, message: Message) -> None:
        """Send ``message`` to one server of ``target`` (every server if ``target.fanout``)."""

    def listen(self, target: Target, on_message: OnMessage) -> Listener:
        """Deliver messages for ``target.topic`` (shared queue), ``topic.server`` (direct) and
        the topic's fanout to ``on_message``, which must not block for long."""

    def close(self) -> None:
        """Release connections and threads; the transport cannot be used afterwards."""


def get_transport(url: str, *, exchange: str = "openkeel") -> Transport:
    """The transport for ``url`` (``inproc://`` or ``rabbit://``).

    ``exchange`` names the RabbitMQ exchanges and prefixes its queue names; in-process
    transports with the same URL name and exchange share one broker.
    """
    scheme = urlsplit(url).scheme
    if scheme == "inproc":
        from openkeel.rpc.inproc import InprocTransport

        return InprocTransport(url, exchange=exchange)
    if scheme in ("rabbit", "amqp"):
        from openkeel.rpc.rabbit import RabbitTransport

        return RabbitTransport(url, exchange=exchange)
    raise errors.TransportUnavailable(f"Unsupported transport URL scheme: {scheme or url!r}")
