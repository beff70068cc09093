"""Routes of the ``os-snapshots`` proxy: up to 2.35 (404 after, Nova's proxy cap)."""

from __future__ import annotations

from openkeel.api.resources.snapshots import handlers, schemas
from openkeel.api.resources.volumes.routes import LIST_QUERY, MAX_PROXY, SHOW_QUERY
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

CREATE = Versioned.of(("2.1", schemas.CREATE))


def register(table: RouteTable) -> None:
    policy = handlers.POLICY
    table.add("GET", "/os-snapshots", endpoint(handlers.list_snapshots, until=MAX_PROXY,
                                               query=LIST_QUERY, policy=policy % "snapshots:list"))  # fmt: skip
    table.add("GET", "/os-snapshots/detail", endpoint(
        handlers.list_snapshots_detail, until=MAX_PROXY, query=LIST_QUERY,
        policy=policy % "snapshots:detail"))  # fmt: skip
    table.add("POST", "/os-snapshots", endpoint(handlers.create_snapshot, until=MAX_PROXY,
                                                body=CREATE, policy=policy % "snapshots:create"))  # fmt: skip
    table.add("GET", "/os-snapshots/{id}", endpoint(
        handlers.show_snapshot, until=MAX_PROXY, query=SHOW_QUERY,
        policy=policy % "snapshots:show"))  # fmt: skip
    table.add("DELETE", "/os-snapshots/{id}", endpoint(
        handlers.delete_snapshot, status=202, until=MAX_PROXY,
        policy=policy % "snapshots:delete"))  # fmt: skip
