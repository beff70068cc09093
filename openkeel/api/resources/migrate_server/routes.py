"""Routes of the ``migrate`` and ``os-migrateLive`` server actions (Nova's migrate_server controller)."""

from __future__ import annotations

from openkeel.api.resources.migrate_server import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
MIGRATE_BODY = Versioned.of(("2.0", schemas.MIGRATE_V21), ("2.56", schemas.MIGRATE_V256))
MIGRATE_LIVE_BODY = Versioned.of(
    ("2.0", schemas.MIGRATE_LIVE_V21),
    ("2.25", schemas.MIGRATE_LIVE_V225),
    ("2.30", schemas.MIGRATE_LIVE_V230),
    ("2.68", schemas.MIGRATE_LIVE_V268),
)


def register(table: RouteTable) -> None:
    """Add the migrate and os-migrateLive actions."""
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
    table.add_action(
        ACTION,
        "os-migrateLive",
        endpoint(
            handlers.migrate_live,
            status=202,
            body=MIGRATE_LIVE_BODY,
            policy="os_compute_api:os-migrate-server:migrate_live",
        ),
    )
