"""Errors to HTTP: Nova's fault bodies, chosen by exception class in one place.

Every error the API returns goes through :func:`fault_for`; handlers never build error bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from openkeel.domain.errors import ComputeError

FAULT_KEYS = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    429: "overLimit",
    501: "notImplemented",
    503: "serviceUnavailable",
}

GONE_MESSAGE = "This resource is no longer available. No forwarding address is given."
NOT_FOUND_MESSAGE = "The resource could not be found."
SUPPORT_TEXT = "Please contact the administrator"
FAULT_CONTENT_TYPE = b"application/json; charset=UTF-8"


@dataclass(frozen=True)
class Fault:
    """An error response: status and Nova's one-key JSON body."""

    status: int
    message: str

    def body(self) -> bytes:
        """``{"<faultKey>": {"code": N, "message": "..."}}``."""
        key = FAULT_KEYS.get(self.status, "computeFault")
        return orjson.dumps({key: {"code": self.status, "message": self.message}})


def fault_for(exc: BaseException) -> Fault:
    """The fault Nova returns for ``exc``; unknown exceptions become a 500 that names only
    the exception class, as Nova does."""
    if isinstance(exc, ComputeError):
        return Fault(exc.code, exc.message)
    return Fault(500, f"Unexpected API Error. {SUPPORT_TEXT}\n{type(exc)}")


def plain_not_found(accept: str) -> tuple[bytes, bytes]:
    """The router-level 404 for an unknown path (webob's, not a Nova fault)."""
    if "application/json" in accept:
        body = orjson.dumps(
            {
                "code": "404 Not Found",
                "title": "Not Found",
                "message": f"{NOT_FOUND_MESSAGE}\n\n   ",
            }
        )
        return body, b"application/json"
    text = f"404 Not Found\n\n{NOT_FOUND_MESSAGE}\n\n   "
    return text.encode(), b"text/plain; charset=UTF-8"
