"""Routes of os-lock-server: lock and unlock on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.lock_server import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
LOCK_BODY = Versioned.of(("2.0", schemas.LOCK_V21), ("2.73", schemas.LOCK_V273))
UNLOCK_BODY = Versioned.of(("2.0", schemas.UNLOCK_V21), until="2.72")


def register(table: RouteTable) -> None:
    """Add the lock and unlock actions to ``table``."""
    table.add_action(
        ACTION,
        "lock",
        endpoint(handlers.lock_server, status=202, body=LOCK_BODY, policy=handlers.POLICY % "lock"),
    )
    table.add_action(
        ACTION,
        "unlock",
        endpoint(
            handlers.unlock_server, status=202, body=UNLOCK_BODY, policy=handlers.POLICY % "unlock"
        ),
    )
