"""Keystone's error answers: ``{"error": {"code", "title", "message"}}``, one class per status."""

from __future__ import annotations

from typing import Any


class IdentityFault(Exception):
    """An error answered to the client as Keystone answers it."""

    status = 500
    title = "Internal Server Error"

    def __init__(self, message: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.status, "title": self.title, "message": self.message}}


class BadRequest(IdentityFault):
    status, title = 400, "Bad Request"


class Unauthorized(IdentityFault):
    status, title = 401, "Unauthorized"


class Forbidden(IdentityFault):
    status, title = 403, "Forbidden"


class NotFound(IdentityFault):
    status, title = 404, "Not Found"


class MethodNotAllowed(IdentityFault):
    status, title = 405, "Method Not Allowed"


class Conflict(IdentityFault):
    status, title = 409, "Conflict"


class RequestEntityTooLarge(IdentityFault):
    status, title = 413, "Request Entity Too Large"


class NotImplementedFault(IdentityFault):
    status, title = 501, "Not Implemented"


AUTH_REQUIRED = "The request you have made requires authentication."


def forbidden(action: str) -> Forbidden:
    """Keystone's policy refusal, naming the rule."""
    return Forbidden(f"You are not authorized to perform the requested action: identity:{action}.")
