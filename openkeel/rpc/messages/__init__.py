"""Typed RPC messages: one frozen dataclass per RPC method, holding that method's arguments.

A role client sends a message (``RoleRpcClient.cast``/``call``); the RPC server rebuilds it with
``from_args`` and hands it to the endpoint method of the same name, which takes
``(context, message)``. Messages carry ids where the receiver re-reads the record anyway (an
instance travels as its uuid), and JSON documents only where the receiver uses the document
(a request spec, a migration). Internal RPC only: the wire form is the fields as primitives,
not Nova's versioned objects (decision 0033).

Per role: ``compute``, ``conductor``, ``scheduler``.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from openkeel.rpc.message import Primitive, to_primitive, version_tuple

Json = Mapping[str, Any]
"""A JSON document the receiver reads as such (request spec, migration, selection)."""


class RpcMessage:
    """Base of the message dataclasses (subclasses are ``@dataclass(frozen=True)``).

    ``method``: the RPC method name; ``versions``: the message versions a client may send,
    newest first (the deployment's version cap picks one); ``since``: fields added after the
    oldest version, left out of older messages.
    """

    method: ClassVar[str]
    versions: ClassVar[tuple[str, ...]]
    since: ClassVar[Mapping[str, str]] = {}
    _tuple_depths: ClassVar[Mapping[str, int] | None] = None

    def to_args(self, version: str) -> dict[str, Primitive]:
        """The message's arguments as primitives, as a ``version`` message carries them."""
        wanted = version_tuple(version)
        return {
            field.name: to_primitive(getattr(self, field.name))
            for field in dataclasses.fields(self)  # type: ignore[arg-type]
            if field.name not in self.since or version_tuple(self.since[field.name]) <= wanted
        }

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        """Rebuild the message from received arguments: unknown arguments (a newer minor
        version's) are ignored, missing required ones raise ``TypeError``, lists become the
        tuples the fields declare."""
        depths = cls._tuple_field_depths()
        values = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            if field.name in args:
                values[field.name] = _tupled(args[field.name], depths.get(field.name, 0))
        return cls(**values)

    @classmethod
    def _tuple_field_depths(cls) -> Mapping[str, int]:
        """How many levels of nested tuples each field declares (computed once per class)."""
        known = cls.__dict__.get("_tuple_depths")
        if known is None:
            hints = typing.get_type_hints(cls)
            known = {
                field.name: _tuple_depth(hints.get(field.name))
                for field in dataclasses.fields(cls)  # type: ignore[arg-type]
            }
            cls._tuple_depths = known
        return known


def _tuple_depth(hint: object) -> int:
    """``tuple[tuple[Json, ...], ...] | None`` -> 2; not a tuple -> 0."""
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        return 1 + (_tuple_depth(args[0]) if args else 0)
    return max((_tuple_depth(arg) for arg in typing.get_args(hint)), default=0)


def _tupled(value: Any, depth: int) -> Any:
    """JSON lists back into the (nested) tuples a field declares."""
    if depth == 0 or not isinstance(value, list):
        return value
    return tuple(_tupled(item, depth - 1) for item in value)


def by_method(*classes: type[RpcMessage]) -> Mapping[str, type[RpcMessage]]:
    """The message classes of one endpoint, by method name."""
    return {cls.method: cls for cls in classes}
