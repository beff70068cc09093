"""An instance action (one user request on a server: create, stop, resize, ...) and its events
(the steps conductor and compute recorded for it), as the os-instance-actions API shows them.

Stored in the cell DB by ``db/repositories/instance_actions.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ActionEvent:
    id: int
    action_id: int
    event: str
    start_time: datetime | None
    finish_time: datetime | None
    result: str | None
    traceback: str | None
    host: str | None
    details: str | None


@dataclass(frozen=True)
class InstanceAction:
    id: int
    instance_uuid: str
    action: str
    request_id: str
    user_id: str | None
    project_id: str | None
    start_time: datetime | None
    finish_time: datetime | None
    message: str | None
    created_at: datetime | None
    updated_at: datetime | None
