"""Nova's soft-delete semantics for cell-DB tables, as SQLAlchemy Core helpers.

A soft-deletable table has ``deleted`` (0 while the row is live, set to the
row's own ``id`` when deleted, so unique constraints that include ``deleted``
let a new live row reuse the key) and ``deleted_at``. Repositories use these
helpers instead of issuing DELETEs.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa

from openkeel.db.schema.columns import utcnow

ReadDeleted = Literal["no", "yes", "only"]
"""Nova's ``RequestContext.read_deleted`` values."""

LIVE = 0
"""Value of ``deleted`` for a row that has not been soft-deleted."""


def is_soft_deletable(table: sa.Table) -> bool:
    """Whether ``table`` carries the ``deleted`` / ``deleted_at`` columns."""
    return "deleted" in table.c and "deleted_at" in table.c


def live(table: sa.Table) -> sa.ColumnElement[bool]:
    """WHERE clause selecting rows that are not soft-deleted."""
    return table.c.deleted == LIVE


def deleted(table: sa.Table) -> sa.ColumnElement[bool]:
    """WHERE clause selecting rows that are soft-deleted."""
    return table.c.deleted != LIVE


def read_deleted_clause(table: sa.Table, read_deleted: ReadDeleted) -> sa.ColumnElement[bool]:
    """WHERE clause for Nova's ``read_deleted`` mode ("no", "yes" or "only")."""
    if read_deleted == "no":
        return live(table)
    if read_deleted == "only":
        return deleted(table)
    if read_deleted == "yes":
        return sa.true()
    raise ValueError(f"Unrecognized read_deleted value '{read_deleted}'")


def soft_delete_values(table: sa.Table) -> dict[str, Any]:
    """SET values of a soft delete: ``deleted = id``, ``deleted_at = now``.

    ``updated_at`` is set to itself so its on-update default does not fire,
    as oslo.db's ``Query.soft_delete`` does.
    """
    values: dict[str, Any] = {"deleted": table.c.id, "deleted_at": utcnow()}
    if "updated_at" in table.c:
        values["updated_at"] = table.c.updated_at
    return values


def soft_delete_statement(table: sa.Table, *where: sa.ColumnElement[bool]) -> sa.Update:
    """UPDATE soft-deleting the live rows of ``table`` matching ``where``."""
    if not is_soft_deletable(table):
        raise ValueError(f"Table {table.name} has no soft-delete columns")
    return sa.update(table).where(live(table), *where).values(soft_delete_values(table))


def soft_delete(connection: sa.Connection, table: sa.Table, *where: sa.ColumnElement[bool]) -> int:
    """Soft-delete the live rows of ``table`` matching ``where``; return how many."""
    result = connection.execute(soft_delete_statement(table, *where))
    return result.rowcount
