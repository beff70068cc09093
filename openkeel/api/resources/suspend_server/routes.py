"""Routes of os-suspend-server: two body actions on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.suspend_server import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"


def register(table: RouteTable) -> None:
    """Add the suspend and resume actions to ``table``."""
    for key, handler, schema in (
        ("suspend", handlers.suspend_server, schemas.SUSPEND_V21),
        ("resume", handlers.resume_server, schemas.RESUME_V21),
    ):
        body = Versioned.of(("2.0", schema))
        ep = endpoint(handler, status=202, body=body, policy=handlers.POLICY % key)
        table.add_action(ACTION, key, ep)
