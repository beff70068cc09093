"""Routes of a server's security groups (the ``os-security-groups`` proxies of 2.1-2.35 are
not built yet: api/unbuilt.py)."""

from __future__ import annotations

from openkeel.api.resources.security_groups import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
INDEX_QUERY = Versioned.of(("2.1", schemas.INDEX_QUERY_V21), ("2.102", schemas.INDEX_QUERY_V2102))


def register(table: RouteTable) -> None:
    table.add(
        "GET",
        "/servers/{server_id}/os-security-groups",
        endpoint(
            handlers.list_server_security_groups, query=INDEX_QUERY, policy=handlers.POLICY % "list"
        ),
    )
    table.add_action(
        ACTION,
        "addSecurityGroup",
        endpoint(handlers.add_security_group, status=202, body=Versioned.of(("2.1", schemas.ADD)),
                 policy=handlers.POLICY % "add"),
    )  # fmt: skip
    table.add_action(
        ACTION,
        "removeSecurityGroup",
        endpoint(handlers.remove_security_group, status=202,
                 body=Versioned.of(("2.1", schemas.REMOVE)), policy=handlers.POLICY % "remove"),
    )  # fmt: skip
