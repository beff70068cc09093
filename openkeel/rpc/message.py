"""What travels on the wire: targets, call contexts, versions, messages, replies and failures.

Shared by both transports (``inproc``, ``rabbit``), ``RpcClient`` and ``RpcServer``. Messages are
JSON documents in both transports, so nothing but primitives (and objects that turn themselves
into primitives with ``to_primitive()``) ever crosses a role boundary.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, runtime_checkable

from openkeel.rpc import errors

Primitive = None | bool | int | float | str | list["Primitive"] | dict[str, "Primitive"]


@runtime_checkable
class SupportsPrimitive(Protocol):
    """A typed payload: a value that knows its wire form."""

    def to_primitive(self) -> object:
        """Wire form: primitives, or more payloads that turn into primitives."""
        ...


@dataclass(frozen=True)
class Target:
    """Where a message goes (client side) or what a server listens on (server side).

    ``topic`` plus ``server`` is Nova's ``compute.<host>``; ``fanout`` reaches every server on the
    topic; ``namespace`` separates endpoints sharing a topic (``compute_task`` on ``conductor``).
    """

    topic: str
    server: str | None = None
    fanout: bool = False
    version: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class CallContext:
    """The request context that accompanies every message."""

    user_id: str | None = None
    project_id: str | None = None
    roles: tuple[str, ...] = ()
    request_id: str = field(default_factory=lambda: f"req-{uuid.uuid4()}")
    # The caller's token (Keystone mode), as Nova's context carries it: compute acts for the
    # user towards the image service (a snapshot's upload). Never logged (repr=False).
    auth_token: str | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Primitive]:
        """Wire form of the context (the token only when there is one)."""
        wire: dict[str, Primitive] = {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "roles": list(self.roles),
            "request_id": self.request_id,
        }
        if self.auth_token:
            wire["auth_token"] = self.auth_token
        return wire

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallContext:
        """Rebuild a context from its wire form (unknown keys are ignored)."""
        return cls(
            user_id=data.get("user_id"),
            project_id=data.get("project_id"),
            roles=tuple(data.get("roles") or ()),
            request_id=str(data.get("request_id") or f"req-{uuid.uuid4()}"),
            auth_token=data.get("auth_token"),
        )


class Failure(TypedDict):
    """Wire form of an exception raised by a remote endpoint."""

    cls: str
    message: str


class Message(TypedDict):
    """Wire form of a request (``reply_to`` is None for casts)."""

    msg_id: str
    method: str
    args: dict[str, Primitive]
    context: dict[str, Primitive]
    version: str
    namespace: str | None
    reply_to: str | None


class Reply(TypedDict):
    """Wire form of the answer to a call."""

    msg_id: str
    result: Primitive
    failure: Failure | None


def version_tuple(version: str) -> tuple[int, int]:
    """``"6.5"`` -> ``(6, 5)``; a bare major means minor 0."""
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def is_compatible(available: str, wanted: str) -> bool:
    """True if a peer that speaks ``available`` can handle a ``wanted`` message (same major)."""
    have, want = version_tuple(available), version_tuple(wanted)
    return have[0] == want[0] and have[1] >= want[1]


def to_primitive(value: object) -> Primitive:
    """Turn a payload into JSON-able primitives (typed payloads via ``to_primitive()``)."""
    # Exact built-in types first: they have no ``to_primitive``, and the runtime Protocol check
    # below is slow (it was a few % of a server boot's CPU on big payloads).
    kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value  # type: ignore[return-value]
    if kind is dict:
        return {str(key): to_primitive(item) for key, item in value.items()}  # type: ignore[attr-defined]
    if kind is list or kind is tuple:
        return [to_primitive(item) for item in value]  # type: ignore[attr-defined]
    if isinstance(value, SupportsPrimitive):
        return to_primitive(value.to_primitive())
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(key): to_primitive(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_primitive(item) for item in value]
    raise TypeError(f"{type(value).__name__} cannot be sent over RPC")


def describe(exc: BaseException) -> Failure:
    """Wire form of ``exc``; a ``RemoteError`` passed on travels as the original failure."""
    if isinstance(exc, errors.RemoteError):
        return {"cls": exc.cls_path, "message": exc.value}
    message = getattr(exc, "message", None)
    return {"cls": errors.class_path(type(exc)), "message": str(message or exc)}


def encode(document: Message | Reply) -> bytes:
    """Serialize a message or reply."""
    return json.dumps(document, separators=(",", ":")).encode()


def decode_message(body: bytes | str) -> Message:
    """Parse a request."""
    message: Message = json.loads(body)
    return message


def decode_reply(body: bytes | str) -> Reply:
    """Parse a reply."""
    reply: Reply = json.loads(body)
    return reply
