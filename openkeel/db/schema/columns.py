"""Column and type builders shared by the API and cell table definitions.

Nova's models mix in the same timestamp and soft-delete columns everywhere;
these helpers build fresh ``Column`` objects for each table.
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql

NAMING_CONVENTION: dict[str, str] = {
    "ix": "%(table_name)s_%(column_0_N_name)s_idx",
    "uq": "uniq_%(table_name)s0%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "%(table_name)s_%(column_0_name)s_fkey",
    "pk": "%(table_name)s_pkey",
}

# Nova creates every MySQL table as InnoDB; we use utf8mb4 rather than
# Nova's 3-byte "utf8" so that any Unicode text round-trips.
MYSQL_TABLE_OPTIONS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
}


def utcnow() -> datetime.datetime:
    """Return the current UTC time as a naive datetime, as Nova stores it."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def medium_text() -> sa.types.TypeEngine[str]:
    """TEXT everywhere, MEDIUMTEXT on MySQL (Nova's ``MediumText``)."""
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql")


def ip_address() -> sa.types.TypeEngine[str]:
    """VARCHAR(39), INET on PostgreSQL (Nova's ``IPAddress``)."""
    return sa.String(39).with_variant(postgresql.INET(), "postgresql")


def cidr() -> sa.types.TypeEngine[str]:
    """VARCHAR(43), INET on PostgreSQL (Nova's ``CIDR``)."""
    return sa.String(43).with_variant(postgresql.INET(), "postgresql")


def id_column() -> sa.Column[int]:
    """The integer surrogate primary key every Nova table has."""
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def timestamp_columns() -> list[sa.Column[datetime.datetime]]:
    """``created_at`` / ``updated_at`` as in oslo.db's ``TimestampMixin``."""
    return [
        sa.Column("created_at", sa.DateTime, default=utcnow),
        sa.Column("updated_at", sa.DateTime, onupdate=utcnow),
    ]


def soft_delete_columns() -> list[sa.Column[datetime.datetime] | sa.Column[int]]:
    """``deleted_at`` / ``deleted`` as in oslo.db's ``SoftDeleteMixin``."""
    return [
        sa.Column("deleted_at", sa.DateTime),
        sa.Column("deleted", sa.Integer, default=0),
    ]
