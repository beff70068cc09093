"""Routes of the ``os-networks`` proxy: index and show up to 2.35 (404 after, Nova's proxy
cap); its create/delete/add/disassociate are Nova's 410 (api/resources/removed)."""

from __future__ import annotations

from typing import Any

from openkeel.api.resources.networks import handlers
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

MAX_PROXY = "2.35"
ANY_QUERY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
QUERY = Versioned.of(("2.1", ANY_QUERY))


def register(table: RouteTable) -> None:
    table.add("GET", "/os-networks", endpoint(handlers.list_networks, until=MAX_PROXY, query=QUERY,
                                              policy=handlers.POLICY % "list"))  # fmt: skip
    table.add("GET", "/os-networks/{id}", endpoint(handlers.show_network, until=MAX_PROXY,
                                                   query=QUERY, policy=handlers.POLICY % "show"))  # fmt: skip
