"""Cinder's error answers: ``{"<name>": {"code": N, "message": "..."}}`` with the fault name of
each status (badRequest, itemNotFound, ...)."""

from __future__ import annotations

from typing import Any


class VolumeFault(Exception):
    """An error answered as Cinder answers it."""

    status = 500
    name = "computeFault"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, Any]:
        return {self.name: {"code": self.status, "message": self.message}}


class BadRequest(VolumeFault):
    status, name = 400, "badRequest"


class Forbidden(VolumeFault):
    status, name = 403, "forbidden"


class NotFound(VolumeFault):
    status, name = 404, "itemNotFound"


class MethodNotAllowed(VolumeFault):
    status, name = 405, "badMethod"


class NotAcceptable(VolumeFault):
    status, name = 406, "notAcceptable"


class Conflict(VolumeFault):
    status, name = 409, "conflictingRequest"


class OverLimit(VolumeFault):
    status, name = 413, "overLimit"


class NotImplementedFault(VolumeFault):
    status, name = 501, "notImplemented"


def policy(action: str) -> Forbidden:
    return Forbidden(f"Policy doesn't allow {action} to be performed.")


def volume_not_found(ident: str) -> NotFound:
    return NotFound(f"Volume {ident} could not be found.")


class SnapshotMissing(NotFound):
    """An unknown (or invisible) snapshot."""

    def __init__(self, ident: str) -> None:
        super().__init__(f"Snapshot {ident} could not be found.")
        self.ident = ident


def snapshot_not_found(ident: str) -> NotFound:
    return SnapshotMissing(ident)


def attachment_not_found(ident: str) -> NotFound:
    return NotFound(f"Volume attachment could not be found with filter: attachment_id = {ident}.")


def invalid_volume(reason: str) -> BadRequest:
    return BadRequest(f"Invalid volume: {reason}")
