"""Route of /os-server-external-events."""

from __future__ import annotations

from openkeel.api.resources.server_external_events import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.external_events import POLICY
from openkeel.api.validation import Versioned

BODY = Versioned.of(
    ("2.0", schemas.CREATE_V21), ("2.51", schemas.CREATE_V251), ("2.76", schemas.CREATE_V276),
    ("2.82", schemas.CREATE_V282), ("2.93", schemas.CREATE_V293),
)  # fmt: skip


def register(table: RouteTable) -> None:
    """Add the external events route to ``table``."""
    table.add(
        "POST",
        "/os-server-external-events",
        endpoint(handlers.create_external_events, body=BODY, policy=POLICY),
    )
