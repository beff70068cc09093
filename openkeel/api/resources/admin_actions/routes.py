"""Routes of os-admin-actions: os-resetState and injectNetworkInfo on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.admin_actions import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"


def register(table: RouteTable) -> None:
    """Add the admin actions to ``table``."""
    for key, handler, schema, rule in (
        ("os-resetState", handlers.reset_state, schemas.RESET_STATE_V21, "reset_state"),
        (
            "injectNetworkInfo",
            handlers.inject_network_info,
            schemas.INJECT_NETWORK_INFO_V21,
            "inject_network_info",
        ),
    ):
        body = Versioned.of(("2.0", schema))
        ep = endpoint(handler, status=202, body=body, policy=handlers.POLICY % rule)
        table.add_action(ACTION, key, ep)
