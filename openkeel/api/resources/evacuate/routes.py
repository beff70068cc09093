"""Route of the ``evacuate`` server action."""

from __future__ import annotations

from openkeel.api.resources.evacuate import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

BODY = Versioned.of(
    ("2.0", schemas.EVACUATE_V21),
    ("2.14", schemas.EVACUATE_V214),
    ("2.29", schemas.EVACUATE_V229),
    ("2.68", schemas.EVACUATE_V268),
)


def register(table: RouteTable) -> None:
    """Add the evacuate action."""
    table.add_action(
        "/servers/{id}/action",
        "evacuate",
        endpoint(handlers.evacuate, status=200, body=BODY, policy=handlers.POLICY),
    )
