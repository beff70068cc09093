"""Routes of os-pause-server: two body actions on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.pause_server import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"


def register(table: RouteTable) -> None:
    """Add the pause and unpause actions to ``table``."""
    for key, handler, schema in (
        ("pause", handlers.pause_server, schemas.PAUSE_V21),
        ("unpause", handlers.unpause_server, schemas.UNPAUSE_V21),
    ):
        body = Versioned.of(("2.0", schema))
        ep = endpoint(handler, status=202, body=body, policy=handlers.POLICY % key)
        table.add_action(ACTION, key, ep)
