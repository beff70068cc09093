"""A server looked up while the conductor hands its build over to a cell.

The API reads the instance mapping (no cell yet), then the build request. On PostgreSQL each
statement reads what is committed at that moment: if the conductor's hand-over (build request
deleted and mapping moved to the cell, one transaction) commits between the two reads, the
build request is gone and the mapping read earlier has no cell. The lookup must read the
mapping again and find the cell, not answer 404 (seen once in CI: GET /servers/{id} of a
server just created on the scaled-out deployment). SQLite and MariaDB read one snapshot per
transaction, so they cannot race this way.
"""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.caches import InstanceLocation, InstanceLocations
from openkeel.api.usecases.servers.lookup import _locate
from openkeel.db import cells, migrate
from openkeel.db.engine import make_engine
from openkeel.db.readers import Readers
from openkeel.db.repositories import build_requests, instance_mappings
from openkeel.domain.instances import FlavorSnapshot, Instance
from tests.db.backends import DatabaseFactory

FLAVOR = FlavorSnapshot(flavorid="1", name="m1.tiny", memory_mb=512, vcpus=1, root_gb=1, id=1)


@dataclass
class _Caches:
    locations: InstanceLocations = field(default_factory=InstanceLocations)


@dataclass
class _Services:
    api_db: sa.Engine
    caches: _Caches = field(default_factory=_Caches)


@pytest.mark.postgresql
def test_a_build_handed_over_between_the_lookups_reads_is_found_in_its_cell(
    database_factory: DatabaseFactory,
) -> None:
    engine = make_engine(database_factory.url("postgresql", "lookup_race"))
    try:
        migrate.upgrade(engine, "api")
        cell = cells.create_cell(engine, name="cell1", transport_url="none:///",
                                 database_connection="sqlite://")  # fmt: skip
        server = Instance(uuid=str(uuidlib.uuid4()), project_id="p", user_id="u",
                          flavor=FLAVOR, display_name="vm")  # fmt: skip
        with engine.begin() as conn:
            instance_mappings.create(conn, server.uuid, "p", "u")
            build_requests.create(conn, server)
        handed: list[str] = []

        def conductor_hands_over(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            if not handed and "FROM instance_mappings" in statement:
                handed.append(statement)
                with engine.begin() as other:  # the conductor's hand-over commits right then
                    build_requests.delete(other, server.uuid)
                    instance_mappings.move_to_cell(other, server.uuid, cell.uuid)

        sa.event.listen(engine, "after_cursor_execute", conductor_hands_over)
        try:
            with Readers() as readers:
                located = _locate(_Services(engine), server.uuid, readers)  # type: ignore[arg-type]
        finally:
            sa.event.remove(engine, "after_cursor_execute", conductor_hands_over)
        assert handed, "the lookup no longer reads the mapping first: rewrite this test"
        assert isinstance(located, InstanceLocation)
        assert located.cell_uuid == cell.uuid
    finally:
        engine.dispose()
