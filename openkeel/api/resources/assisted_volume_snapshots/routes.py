"""Routes of ``/os-assisted-volume-snapshots``."""

from __future__ import annotations

from openkeel.api.resources.assisted_volume_snapshots import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.assisted_snapshots import POLICY
from openkeel.api.validation import Versioned

COLLECTION = "/os-assisted-volume-snapshots"
CREATE = Versioned.of(("2.1", schemas.CREATE_V21))
DELETE_QUERY = Versioned.of(("2.1", schemas.DELETE_QUERY_V21), ("2.75", schemas.DELETE_QUERY_V275))


def register(table: RouteTable) -> None:
    table.add("POST", COLLECTION, endpoint(handlers.create_snapshot, body=CREATE,
                                           policy=POLICY % "create"))  # fmt: skip
    table.add("DELETE", COLLECTION + "/{id}", endpoint(handlers.delete_snapshot, status=204,
                                                       query=DELETE_QUERY,
                                                       policy=POLICY % "delete"))  # fmt: skip
