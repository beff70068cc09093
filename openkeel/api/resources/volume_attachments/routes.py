"""Routes of ``/servers/{server_id}/os-volume_attachments`` (PUT: the swap, and from 2.85 the
update; its two policies are checked by the use case, which knows which applies)."""

from __future__ import annotations

from openkeel.api.resources.volume_attachments import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers/{server_id}/os-volume_attachments"
MEMBER = COLLECTION + "/{id}"
INDEX_QUERY = Versioned.of(("2.1", schemas.INDEX_QUERY_V21), ("2.75", schemas.INDEX_QUERY_V275))
# Nova 34 applies its show query schema (unknown parameters ignored) at every version.
UPDATE = Versioned.of(("2.1", schemas.UPDATE_V21), ("2.85", schemas.UPDATE_V285))
SHOW_QUERY = Versioned.of(("2.1", schemas.SHOW_QUERY_V21))
CREATE = Versioned.of(
    ("2.1", schemas.CREATE_V21), ("2.49", schemas.CREATE_V249), ("2.79", schemas.CREATE_V279)
)


def register(table: RouteTable) -> None:
    policy = handlers.POLICY
    table.add("GET", COLLECTION, endpoint(handlers.list_attachments, query=INDEX_QUERY,
                                          policy=policy % "index"))  # fmt: skip
    # 2.101: the attach answers 202 without a body (the handler's Reply says which).
    for since, until, status in (("2.1", "2.100", 200), ("2.101", "2.104", 202)):
        table.add("POST", COLLECTION, endpoint(handlers.attach, status=status, since=since, until=until,
                                               body=CREATE, policy=policy % "create"))  # fmt: skip
    table.add("GET", MEMBER, endpoint(handlers.show_attachment, query=SHOW_QUERY,
                                      policy=policy % "show"))  # fmt: skip
    table.add("PUT", MEMBER, endpoint(handlers.update, status=202, body=UPDATE,
                                      policy=policy % "update"))  # fmt: skip
    table.add("DELETE", MEMBER, endpoint(handlers.detach, status=202, policy=policy % "delete"))
