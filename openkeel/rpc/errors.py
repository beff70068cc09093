"""Messaging errors and the registry that turns remote failures back into local exceptions.

RPC clients (``openkeel.rpc.client``) raise these; servers (``openkeel.rpc.server``) describe any
exception an endpoint raises as class path + message, and the caller re-raises it as the same
class when that class is registered here (all of ``openkeel.domain.errors`` and this module are),
else as ``RemoteError``.
"""

from __future__ import annotations

import inspect
import re
from types import ModuleType

from openkeel.domain import errors as domain_errors


class MessagingError(Exception):
    """Base of every messaging-layer error."""


class MessagingTimeout(MessagingError):
    """No reply arrived before the call's timeout."""


class RemoteError(MessagingError):
    """The remote endpoint raised an exception of a class this side does not know.

    ``message`` (what an instance fault shows, see ``db.records.fault_fields``) names the
    remote class and the first line of its message, credentials in URLs masked: "OperationalError:
    (sqlite3.OperationalError) attempt to write a readonly database". Nova records only the word
    "RemoteError" there, which tells nobody what failed; the full remote text (SQL statement
    included) stays in ``value`` and in the fault's details, which only admins see.
    ``cls_path`` is the remote class path, so a RemoteError passed on over RPC arrives unchanged.
    """

    def __init__(self, exc_type: str, value: str, cls_path: str | None = None) -> None:
        super().__init__(f"Remote error: {exc_type} {value}")
        self.exc_type = exc_type
        self.value = value
        self.cls_path = cls_path or exc_type
        self.message = remote_summary(exc_type, value)


_CREDENTIALS = re.compile(r"(://[^/\s:@]+):[^/\s@]+@")


def remote_summary(exc_type: str, value: str) -> str:
    """``"<class>: <first line of value>"`` with URL passwords masked (``<class>`` if empty)."""
    first = next((line.strip() for line in value.splitlines() if line.strip()), "")
    first = _CREDENTIALS.sub(r"\1:***@", first)
    return f"{exc_type}: {first}" if first else exc_type


class UnsupportedVersion(MessagingError):
    """The message version is beyond what the peer (server) or the version cap (client) allows."""


class NoSuchMethod(MessagingError):
    """The server's endpoints have no method of that name."""


class InvalidTarget(MessagingError):
    """The target cannot be used for this kind of send (e.g. a call with fanout)."""


class TransportUnavailable(MessagingError):
    """The transport URL is unknown or the transport has been closed."""


_REGISTRY: dict[str, type[BaseException]] = {}


def class_path(cls: type[BaseException]) -> str:
    """``module.QualName`` of ``cls``: how failures name their class on the wire."""
    return f"{cls.__module__}.{cls.__qualname__}"


def register_remote(cls: type[BaseException]) -> type[BaseException]:
    """Let failures of class ``cls`` be re-raised as ``cls`` by callers (usable as decorator)."""
    _REGISTRY[class_path(cls)] = cls
    return cls


def register_module(module: ModuleType) -> None:
    """Register every exception class defined in ``module``."""
    for _, member in inspect.getmembers(module, inspect.isclass):
        if issubclass(member, BaseException) and member.__module__ == module.__name__:
            register_remote(member)


def rebuild(path: str, message: str) -> BaseException:
    """The local exception for a remote failure of class ``path`` carrying ``message``.

    Registered classes are rebuilt without calling their ``__init__`` (whose signature varies),
    so the caller sees exactly the remote message; anything else becomes ``RemoteError``.
    """
    cls = _REGISTRY.get(path)
    if cls is None:
        return RemoteError(path.rsplit(".", 1)[-1], message, path)
    exc = cls.__new__(cls)
    BaseException.__init__(exc, message)
    if isinstance(exc, domain_errors.ComputeError):
        exc.message = message
    return exc


def _register_defaults() -> None:
    import sys

    register_module(domain_errors)
    register_module(sys.modules[__name__])
    # A nested RemoteError has no class of its own to restore; it stays a RemoteError.
    del _REGISTRY[class_path(RemoteError)]


_register_defaults()
