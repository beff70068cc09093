"""Routes of os-hosts: Nova serves them up to 2.42 (404 from 2.43)."""

from __future__ import annotations

from openkeel.api.resources.hosts import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

BASE = "/os-hosts"
UNTIL = "2.42"
INDEX_QUERY = Versioned.of(("2.1", schemas.INDEX_QUERY_V21))
ANY_QUERY = Versioned.of(("2.1", schemas.ANY_QUERY_V21))
UPDATE_BODY = Versioned.of(("2.0", schemas.UPDATE_V21))


def register(table: RouteTable) -> None:
    """Add the host list, show, update and power actions."""
    p = handlers.POLICY
    table.add("GET", BASE, endpoint(handlers.list_hosts, until=UNTIL, query=INDEX_QUERY, policy=p % "list"))  # fmt: skip
    one = f"{BASE}/{{id}}"
    table.add("GET", one, endpoint(handlers.show_host, until=UNTIL, query=ANY_QUERY, policy=p % "show"))  # fmt: skip
    table.add("PUT", one, endpoint(handlers.update_host, until=UNTIL, body=UPDATE_BODY, policy=p % "update"))  # fmt: skip
    for action, handler, rule in (
        ("reboot", handlers.reboot_host, "reboot"),
        ("shutdown", handlers.shutdown_host, "shutdown"),
        ("startup", handlers.startup_host, "start"),
    ):
        table.add("GET", f"{one}/{action}", endpoint(handler, until=UNTIL, query=ANY_QUERY, policy=p % rule))  # fmt: skip
