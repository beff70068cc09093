"""Routes of the ``os-floating-ips`` proxy (2.1-2.35, 404 after: Nova's proxy cap) and of the
``addFloatingIp`` / ``removeFloatingIp`` actions (2.1-2.43, 404 from 2.44)."""

from __future__ import annotations

from openkeel.api.resources.floating_ips import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

MAX_PROXY, MAX_ACTION = "2.35", "2.43"
COLLECTION, MEMBER = "/os-floating-ips", "/os-floating-ips/{id}"
QUERY = Versioned.of(("2.1", schemas.ANY_QUERY))


def register(table: RouteTable) -> None:
    h, p, cap = handlers, handlers.POLICY, MAX_PROXY
    table.add("GET", COLLECTION, endpoint(h.list_floating_ips, until=cap, query=QUERY,
                                          policy=p % "list"))  # fmt: skip
    table.add("POST", COLLECTION, endpoint(h.create_floating_ip, until=cap,
                                           body=Versioned.of(("2.1", schemas.CREATE)),
                                           policy=p % "create"))  # fmt: skip
    table.add("GET", MEMBER, endpoint(h.show_floating_ip, until=cap, query=QUERY,
                                      policy=p % "show"))  # fmt: skip
    table.add("DELETE", MEMBER, endpoint(h.delete_floating_ip, status=202, until=cap,
                                         policy=p % "delete"))  # fmt: skip
    action = "/servers/{id}/action"
    table.add_action(action, "addFloatingIp", endpoint(
        h.add_floating_ip, status=202, until=MAX_ACTION, body=Versioned.of(("2.1", schemas.ADD)),
        policy=p % "add"))  # fmt: skip
    table.add_action(action, "removeFloatingIp", endpoint(
        h.remove_floating_ip, status=202, until=MAX_ACTION,
        body=Versioned.of(("2.1", schemas.REMOVE)), policy=p % "remove"))  # fmt: skip
