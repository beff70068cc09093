"""Route of the ``migrate`` server action (Nova's migrate_server controller)."""

from __future__ import annotations

from openkeel.api.resources.migrate_server import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
MIGRATE_BODY = Versioned.of(("2.0", schemas.MIGRATE_V21), ("2.56", schemas.MIGRATE_V256))


def register(table: RouteTable) -> None:
    """Add the migrate action."""
    table.add_action(
        ACTION,
        "migrate",
        endpoint(
            handlers.migrate,
            status=202,
            body=MIGRATE_BODY,
            policy="os_compute_api:os-migrate-server:migrate",
        ),
    )
