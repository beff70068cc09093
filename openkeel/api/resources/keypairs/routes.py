"""Routes of os-keypairs: list, create, show, delete with their microversion windows
(create answers 200 and delete 202 until 2.1; 201 and 204 from 2.2)."""

from __future__ import annotations

from openkeel.api.resources.keypairs import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/os-keypairs"
MEMBER = "/os-keypairs/{id}"
POLICY = "os_compute_api:os-keypairs:%s"

CREATE_BODY = Versioned.of(
    ("2.1", schemas.CREATE_V21),
    ("2.2", schemas.CREATE_V22),
    ("2.10", schemas.CREATE_V210),
    ("2.92", schemas.CREATE_V292),
)
INDEX_QUERY = Versioned.of(
    ("2.1", schemas.QUERY_V21),
    ("2.10", schemas.QUERY_V210),
    ("2.35", schemas.INDEX_QUERY_V235),
    ("2.75", schemas.INDEX_QUERY_V275),
)
MEMBER_QUERY = Versioned.of(
    ("2.1", schemas.QUERY_V21),
    ("2.10", schemas.QUERY_V210),
    ("2.75", schemas.QUERY_V275),
)


def register(table: RouteTable) -> None:
    """Add the os-keypairs routes to ``table``."""
    table.add(
        "GET",
        COLLECTION,
        endpoint(handlers.list_keypairs, query=INDEX_QUERY, policy=POLICY % "index"),
    )
    for status, since, until in ((200, "2.1", "2.1"), (201, "2.2", "2.104")):
        table.add(
            "POST",
            COLLECTION,
            endpoint(
                handlers.create_keypair,
                status=status,
                since=since,
                until=until,
                body=CREATE_BODY,
                policy=POLICY % "create",
            ),
        )
    table.add(
        "GET",
        MEMBER,
        endpoint(handlers.show_keypair, query=MEMBER_QUERY, policy=POLICY % "show", bounded=True),
    )
    for status, since, until in ((202, "2.1", "2.1"), (204, "2.2", "2.104")):
        table.add(
            "DELETE",
            MEMBER,
            endpoint(
                handlers.delete_keypair,
                status=status,
                since=since,
                until=until,
                query=MEMBER_QUERY,
                policy=POLICY % "delete",
            ),
        )
