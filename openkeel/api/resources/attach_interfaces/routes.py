"""Routes of ``/servers/{server_id}/os-interface`` (2.49 tag on attach, 2.70 tag shown, strict
queries from 2.102)."""

from __future__ import annotations

from openkeel.api.resources.attach_interfaces import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/os-interface"
MEMBER = COLLECTION + "/{id}"
QUERY = Versioned.of(("2.1", schemas.QUERY_V21), ("2.102", schemas.QUERY_V2102))
CREATE = Versioned.of(("2.1", schemas.CREATE_V21), ("2.49", schemas.CREATE_V249))


def register(table: RouteTable) -> None:
    policy = handlers.POLICY
    table.add("GET", COLLECTION, endpoint(handlers.list_interfaces, query=QUERY,
                                          policy=policy % "list"))  # fmt: skip
    table.add("POST", COLLECTION, endpoint(handlers.attach, body=CREATE, policy=policy % "create"))
    table.add("GET", MEMBER, endpoint(handlers.show_interface, query=QUERY,
                                      policy=policy % "show"))  # fmt: skip
    table.add("DELETE", MEMBER, endpoint(handlers.detach, status=202, policy=policy % "delete"))
