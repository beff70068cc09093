"""Domain errors raised by use cases and adapters.

Each class carries the HTTP status Nova answers with for it; the API layer translates them to
Nova's fault bodies in one place (``openkeel.api.faults``) by class lookup, so handlers never
catch them. Messages follow Nova's wording because clients and tempest match on them.
"""

from __future__ import annotations


class ComputeError(Exception):
    """Base of every error the product raises on purpose."""

    code: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Invalid(ComputeError):
    """The request is well formed but its content is not acceptable (400)."""

    code = 400


class ValidationFailed(Invalid):
    """A request body or query string failed JSON-schema validation (400)."""


class Unauthorized(ComputeError):
    """No valid credentials (401)."""

    code = 401


class Forbidden(ComputeError):
    """The caller may not do this (403)."""

    code = 403


class PolicyNotAuthorized(Forbidden):
    """A policy rule denied the request (403)."""

    def __init__(self, action: str) -> None:
        super().__init__(f"Policy doesn't allow {action} to be performed.")
        self.action = action


class OverQuota(Forbidden):
    """A quota would be exceeded; Nova answers 403 for these in the compute API."""


class NotFound(ComputeError):
    """The named object does not exist or is not visible to the caller (404)."""

    code = 404


class Conflict(ComputeError):
    """The object exists already, or is in a state that forbids the request (409)."""

    code = 409


class NotImplementedYet(ComputeError):
    """The feature is not supported by this deployment (501)."""

    code = 501


class ServiceUnavailable(ComputeError):
    """A backing service is down (503)."""

    code = 503


class NoValidHost(ComputeError):
    """The scheduler found no host for a request (Nova's NoValidHost, 500 when surfaced).

    Raised by the scheduler role, re-raised by RPC callers (conductor) as this class.
    """

    def __init__(self, reason: str = "") -> None:
        super().__init__(f"No valid host was found. {reason}")
        self.reason = reason
