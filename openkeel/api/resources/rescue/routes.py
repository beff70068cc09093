"""Routes of os-rescue: two body actions on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.rescue import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"


def register(table: RouteTable) -> None:
    """Add the rescue (200, as Nova keeps for compatibility) and unrescue (202) actions."""
    for key, handler, schema, status, policy in (
        ("rescue", handlers.rescue_server, schemas.RESCUE_V21, 200, handlers.RESCUE_POLICY),
        ("unrescue", handlers.unrescue_server, schemas.UNRESCUE_V21, 202,
         handlers.UNRESCUE_POLICY),
    ):  # fmt: skip
        body = Versioned.of(("2.0", schema))
        table.add_action(ACTION, key, endpoint(handler, status=status, body=body, policy=policy))
