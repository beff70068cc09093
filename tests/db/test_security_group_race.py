"""Two builds of a new project racing to create its ``default`` security group.

Each instance's groups are created on first use. On PostgreSQL and MariaDB two conductors may
both find no ``default`` group and both insert it; the loser must use the winner's group, not
fail the build with a unique-constraint error (seen in tests/faults: "Build of ... failed in
conductor ... duplicate key value violates unique constraint
uniq_security_groups0project_id0name0deleted"). SQLite serializes writers, so it cannot race.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.repositories import instances as repo
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.instances import FlavorSnapshot, Instance
from tests.db.backends import SERVER_BACKENDS, Backend, DatabaseFactory

FLAVOR = FlavorSnapshot(flavorid="1", name="m1.tiny", memory_mb=512, vcpus=1, root_gb=1, id=7)


def _instance() -> Instance:
    return Instance(uuid=str(uuidlib.uuid4()), project_id="new-project", user_id="u",
                    flavor=FLAVOR, display_name="vm", security_groups=("default",))  # fmt: skip


@pytest.mark.parametrize(
    "backend", [pytest.param(b, marks=getattr(pytest.mark, b)) for b in SERVER_BACKENDS]
)
def test_the_build_that_loses_the_race_for_the_default_group_uses_the_winners(
    backend: Backend, database_factory: DatabaseFactory
) -> None:
    engine = make_engine(database_factory.url(backend, "sg_race"))
    try:
        _race(engine)
    finally:
        engine.dispose()


def _race(engine: sa.Engine) -> None:
    migrate.upgrade(engine, "cell")
    groups = cell_schema.security_groups
    winner = _instance()
    fired: list[str] = []

    def winner_commits_first(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not fired and statement.startswith("SELECT security_groups.id"):
            fired.append(statement)
            with engine.begin() as other:  # the other conductor's build commits right then
                repo.create(other, winner)

    sa.event.listen(engine, "after_cursor_execute", winner_commits_first)
    try:
        with engine.begin() as conn:
            loser = repo.create(conn, _instance())
    finally:
        sa.event.remove(engine, "after_cursor_execute", winner_commits_first)
    with engine.connect() as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(groups)).scalar_one()
        loser = repo.get(conn, loser.uuid)
    assert fired, "the repository no longer looks the group up first: rewrite this test"
    assert count == 1
    assert loser.security_groups == ("default",)
