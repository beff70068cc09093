"""Schema migrations for the API and cell databases (two Alembic trees).

``upgrade`` is what ``nova-manage api_db sync`` / ``db sync`` run; it needs no
alembic.ini: the Alembic configuration is built here and the revision files
ship as package data under ``openkeel/db/migrations/<tree>/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema

Tree = Literal["api", "cell"]
TREES: tuple[Tree, ...] = get_args(Tree)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


class MigrationEnvironment(Protocol):
    """What ``env.py`` sees as ``alembic.context`` (a module proxying EnvironmentContext)."""

    config: Config

    def configure(self, *args: Any, **kwargs: Any) -> None: ...

    def begin_transaction(self) -> AbstractContextManager[Any]: ...

    def run_migrations(self, *args: Any, **kwargs: Any) -> None: ...


class MigrationError(Exception):
    """A database is at a revision this openkeel does not know."""


def target_metadata(tree: Tree) -> sa.MetaData:
    """The table definitions the head revision of ``tree`` must produce."""
    return api_schema.metadata if tree == "api" else cell_schema.metadata


def alembic_config(tree: Tree, connection: sa.Connection | None = None) -> Config:
    """An in-memory Alembic configuration for ``tree``, optionally bound to a connection."""
    if tree not in TREES:
        raise ValueError(f"Unknown migration tree {tree!r}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR / tree))
    config.set_main_option("path_separator", "os")
    config.attributes["tree"] = tree
    config.attributes["connection"] = connection
    return config


def upgrade(url_or_engine: str | sa.Engine, tree: Tree, revision: str = "head") -> None:
    """Migrate the database to ``revision`` (default: the newest) of ``tree``."""
    with _connection(url_or_engine) as connection:
        command.upgrade(alembic_config(tree, connection), revision)


def downgrade(url_or_engine: str | sa.Engine, tree: Tree, revision: str = "base") -> None:
    """Migrate the database back to ``revision`` (default: empty) of ``tree``."""
    with _connection(url_or_engine) as connection:
        command.downgrade(alembic_config(tree, connection), revision)


def current_revision(url_or_engine: str | sa.Engine, tree: Tree | None = None) -> str | None:
    """The revision the database is at, or None if it was never migrated.

    With ``tree`` given, raise ``MigrationError`` if that revision is not part
    of it (for example a cell database passed as the API database).
    """
    with _connection(url_or_engine) as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
    if tree is not None and revision is not None and revision not in _revisions(tree):
        raise MigrationError(f"Database revision {revision} is not in the {tree} tree")
    return revision


def head_revision(tree: Tree) -> str:
    """The newest revision of ``tree``."""
    head = ScriptDirectory.from_config(alembic_config(tree)).get_current_head()
    if head is None:
        raise MigrationError(f"The {tree} tree has no revisions")
    return head


def run_environment(context: MigrationEnvironment) -> None:
    """Body of each tree's ``env.py``: run migrations on the configured connection."""
    tree: Tree = context.config.attributes["tree"]
    connection: sa.Connection | None = context.config.attributes.get("connection")
    if connection is None:
        raise MigrationError("Migrations run only through openkeel.db.migrate")
    context.configure(
        connection=connection,
        target_metadata=target_metadata(tree),
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _revisions(tree: Tree) -> set[str]:
    script = ScriptDirectory.from_config(alembic_config(tree))
    return {rev.revision for rev in script.walk_revisions()}


@contextlib.contextmanager
def _connection(url_or_engine: str | sa.Engine) -> Iterator[sa.Connection]:
    if isinstance(url_or_engine, sa.Engine):
        with url_or_engine.begin() as connection:
            yield connection
        return
    engine = make_engine(url_or_engine)
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        engine.dispose()
