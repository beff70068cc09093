"""Builds Nova's ``shadow_<table>`` archive tables from live table definitions.

``nova-manage db archive_deleted_rows`` moves soft-deleted rows into these
copies: same columns and primary key, but no defaults, unique constraints,
foreign keys or indexes.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from openkeel.db.schema.columns import MYSQL_TABLE_OPTIONS

SHADOW_PREFIX = "shadow_"


def shadow_name(table_name: str) -> str:
    """Name of the archive table for ``table_name``."""
    return SHADOW_PREFIX + table_name


def shadow_table(table: sa.Table) -> sa.Table:
    """Define ``shadow_<table>`` in the same metadata as ``table``."""
    return sa.Table(
        shadow_name(table.name),
        table.metadata,
        *(_shadow_column(column) for column in table.columns),
        **MYSQL_TABLE_OPTIONS,
    )


def _shadow_column(column: sa.Column[Any]) -> sa.Column[Any]:
    return sa.Column(
        column.name,
        _shadow_type(column.type),
        primary_key=column.primary_key,
        # Archived rows keep the id they had in the live table.
        autoincrement=False,
        nullable=column.nullable,
    )


def _shadow_type(type_: sa.types.TypeEngine[Any]) -> sa.types.TypeEngine[Any]:
    if isinstance(type_, sa.Enum):
        # PostgreSQL enum types are schema objects; Nova gives the shadow
        # table its own (``shadow_instances0locked_by``).
        enum: sa.types.TypeEngine[Any] = sa.Enum(*type_.enums, name=shadow_name(str(type_.name)))
        return enum
    return type_.copy()
