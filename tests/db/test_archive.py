"""Archiving soft-deleted rows into the shadow tables and purging them, on every backend."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db import archive, migrate
from openkeel.db.engine import make_engine
from openkeel.db.schema import cell as cell_schema
from openkeel.db.softdelete import soft_delete

OLD = datetime.datetime(2020, 1, 1)


@pytest.fixture
def cell(db_url: str) -> Iterator[sa.Engine]:
    migrate.upgrade(db_url, "cell")
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def add_instance(engine: sa.Engine, uuid: str) -> None:
    with engine.begin() as conn:
        conn.execute(sa.insert(cell_schema.instances).values(uuid=uuid, deleted=0))
        conn.execute(sa.insert(cell_schema.instance_extra).values(instance_uuid=uuid, deleted=0))
        action = conn.execute(
            sa.insert(cell_schema.instance_actions).values(instance_uuid=uuid, action="create")
        ).inserted_primary_key
        assert action is not None
        conn.execute(
            sa.insert(cell_schema.instance_actions_events).values(
                action_id=action[0], event="spawn", deleted=0
            )
        )


def delete_instance(engine: sa.Engine, uuid: str) -> None:
    with engine.begin() as conn:
        soft_delete(conn, cell_schema.instances, cell_schema.instances.c.uuid == uuid)


def count(engine: sa.Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def test_an_archived_instance_takes_its_referencing_rows_along(cell: sa.Engine) -> None:
    add_instance(cell, "gone")
    add_instance(cell, "kept")
    delete_instance(cell, "gone")
    batch = archive.archive_batch(cell, 1000)
    assert batch.instance_uuids == ["gone"]
    assert batch.tables == {
        "instances": 1,
        "instance_extra": 1,
        "instance_actions": 1,
        "instance_actions_events": 1,
    }
    assert count(cell, cell_schema.instances) == 1
    assert count(cell, cell_schema.instance_actions_events) == 1
    assert count(cell, cell_schema.shadow_instances) == 1
    assert count(cell, cell_schema.shadow_instance_actions_events) == 1
    assert archive.archive_batch(cell, 1000).tables == {}


def test_before_and_max_rows_limit_what_is_archived(cell: sa.Engine) -> None:
    for uuid in ("a", "b", "c"):
        add_instance(cell, uuid)
        delete_instance(cell, uuid)
    assert archive.archive_batch(cell, 1000, before=OLD).tables == {}
    first = archive.archive_batch(cell, 2)
    assert first.tables["instances"] == 2  # referencing rows come on top (a soft limit)
    assert archive.archive_batch(cell, 2).instance_uuids == ["c"]


def test_task_log_is_archived_only_when_asked(cell: sa.Engine) -> None:
    with cell.begin() as conn:
        conn.execute(
            sa.insert(cell_schema.task_log).values(
                task_name="t", state="DONE", host="h", message="", period_beginning=OLD,
                period_ending=OLD, deleted=0,
            )
        )  # fmt: skip
    assert archive.archive_batch(cell, 10).tables == {}
    assert archive.archive_batch(cell, 10, task_log=True).tables == {"task_log": 1}


def test_purge_before_a_date_and_all(cell: sa.Engine) -> None:
    add_instance(cell, "gone")
    delete_instance(cell, "gone")
    archive.archive_batch(cell, 1000)
    messages: list[str] = []
    assert archive.purge(cell, OLD, messages.append) == 0  # nothing that old
    later = datetime.datetime.now() + datetime.timedelta(days=1)
    # By deleted_at (instances), created_at (actions, events); instance_extra, never
    # soft-deleted itself, has no deleted_at: only --all removes it.
    assert archive.purge(cell, later, messages.append) == 3
    assert count(cell, cell_schema.shadow_instances) == 0
    assert count(cell, cell_schema.shadow_instance_extra) == 1
    assert archive.purge(cell, None, messages.append) == 1
    assert count(cell, cell_schema.shadow_instance_extra) == 0
    assert "Deleted 1 rows from shadow_instance_extra based on timestamp column (n/a)" in messages
