"""The Alembic trees build exactly the schema ``openkeel.db.schema`` declares, on every backend."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.migrate import Tree

TREES = pytest.mark.parametrize("tree", migrate.TREES)


def schema_diffs(engine: sa.Engine, tree: Tree) -> list[object]:
    """What autogenerate would change to make the database match the metadata."""
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(context, migrate.target_metadata(tree)))


@TREES
def test_upgrade_builds_the_declared_schema(db_url: str, tree: Tree) -> None:
    engine = make_engine(db_url)
    try:
        migrate.upgrade(engine, tree)
        assert schema_diffs(engine, tree) == []
    finally:
        engine.dispose()


@TREES
def test_upgrade_records_the_head_revision_and_repeats_harmlessly(db_url: str, tree: Tree) -> None:
    assert migrate.current_revision(db_url) is None
    migrate.upgrade(db_url, tree)
    assert migrate.current_revision(db_url, tree) == migrate.head_revision(tree)
    migrate.upgrade(db_url, tree)
    assert migrate.current_revision(db_url, tree) == migrate.head_revision(tree)


@TREES
def test_downgrade_to_base_removes_every_table(db_url: str, tree: Tree) -> None:
    migrate.upgrade(db_url, tree)
    migrate.downgrade(db_url, tree)
    engine = make_engine(db_url)
    try:
        assert sa.inspect(engine).get_table_names() == ["alembic_version"]
    finally:
        engine.dispose()
    # And the schema can be built again (PostgreSQL ENUM types were dropped too).
    migrate.upgrade(db_url, tree)


def test_current_revision_rejects_the_other_tree(db_url: str) -> None:
    migrate.upgrade(db_url, "api")
    with pytest.raises(migrate.MigrationError):
        migrate.current_revision(db_url, "cell")


def test_the_trees_are_linear_with_one_head() -> None:
    for tree in migrate.TREES:
        assert migrate.head_revision(tree)


def test_migrations_ship_as_package_data() -> None:
    """Every file Alembic needs is covered by pyproject's package-data patterns."""
    for tree in migrate.TREES:
        directory = migrate.MIGRATIONS_DIR / tree
        assert (directory / "env.py").is_file()
        assert (directory / "script.py.mako").is_file()
        assert list((directory / "versions").glob("*_initial_*.py"))
