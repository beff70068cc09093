"""Routes of /servers/{server_id}/migrations (Nova's ServerMigrationsController)."""

from __future__ import annotations

from openkeel.api.resources.server_migrations import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/migrations"
MEMBER = "/servers/{server_id}/migrations/{id}"
POLICY = "os_compute_api:servers:migrations:%s"

QUERY = Versioned.of(("2.23", schemas.QUERY_V223), ("2.102", schemas.QUERY_V2102))
FORCE_COMPLETE_BODY = Versioned.of(("2.22", schemas.FORCE_COMPLETE_V222))


def register(table: RouteTable) -> None:
    """Add list, show, abort and the force_complete action."""
    table.add(
        "GET", COLLECTION,
        endpoint(handlers.list_server_migrations, 200, since="2.23", query=QUERY,
                 policy=POLICY % "index"),
    )  # fmt: skip
    table.add(
        "GET", MEMBER,
        endpoint(handlers.show_server_migration, 200, since="2.23", query=QUERY,
                 policy=POLICY % "show"),
    )  # fmt: skip
    table.add(
        "DELETE", MEMBER,
        endpoint(handlers.abort_server_migration, 202, since="2.24", policy=POLICY % "delete"),
    )  # fmt: skip
    table.add_action(
        MEMBER + "/action",
        "force_complete",
        endpoint(handlers.force_complete, 202, since="2.22", body=FORCE_COMPLETE_BODY,
                 policy=POLICY % "force_complete"),
    )  # fmt: skip
