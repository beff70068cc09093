"""Routes of the ``os-volumes`` proxy: up to 2.35 (404 after, Nova's proxy cap)."""

from __future__ import annotations

from openkeel.api.resources.volumes import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

MAX_PROXY = "2.35"
LIST_QUERY = Versioned.of(("2.1", schemas.LIST_QUERY))
SHOW_QUERY = Versioned.of(("2.1", schemas.SHOW_QUERY))
CREATE = Versioned.of(("2.1", schemas.CREATE))


def register(table: RouteTable) -> None:
    policy = handlers.POLICY
    table.add("GET", "/os-volumes", endpoint(handlers.list_volumes, until=MAX_PROXY,
                                             query=LIST_QUERY, policy=policy % "list"))  # fmt: skip
    table.add("GET", "/os-volumes/detail", endpoint(
        handlers.list_volumes_detail, until=MAX_PROXY, query=LIST_QUERY,
        policy=policy % "detail"))  # fmt: skip
    table.add("POST", "/os-volumes", endpoint(handlers.create_volume, until=MAX_PROXY,
                                              body=CREATE, policy=policy % "create"))  # fmt: skip
    table.add("GET", "/os-volumes/{id}", endpoint(handlers.show_volume, until=MAX_PROXY,
                                                  query=SHOW_QUERY, policy=policy % "show"))  # fmt: skip
    table.add("DELETE", "/os-volumes/{id}", endpoint(handlers.delete_volume, status=202,
                                                     until=MAX_PROXY, policy=policy % "delete"))  # fmt: skip
