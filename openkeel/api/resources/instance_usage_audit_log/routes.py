"""Routes of os-instance_usage_audit_log (any query until 2.101, none from 2.102)."""

from __future__ import annotations

from openkeel.api.resources.instance_usage_audit_log import handlers
from openkeel.api.resources.server_ips import schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

BASE = "/os-instance_usage_audit_log"
QUERY = Versioned.of(("2.1", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))


def register(table: RouteTable) -> None:
    """Add the audit log of now and of a given time."""
    p = handlers.POLICY
    table.add("GET", BASE, endpoint(handlers.list_audit_logs, query=QUERY, policy=p % "list"))
    table.add("GET", f"{BASE}/{{id}}", endpoint(handlers.show_audit_log, query=QUERY, policy=p % "show"))  # fmt: skip
