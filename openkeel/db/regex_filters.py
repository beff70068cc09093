"""Regular-expression filters that answer 400, never 500, for a pattern the database refuses.

The API checks filter patterns with Python's ``re`` (as Nova's ``regex`` query format does),
but each database has its own dialect: PostgreSQL refuses ``(?P<n>x)`` or ``a++`` and MariaDB
``\\u0041``, which Python accepts. Where Nova would fail with a database error (500), a query
the database fails with a regular-expression error has its patterns probed one by one; the one
refused turns into :class:`RegexFilterRefused` (400). Any other failure is re-raised unchanged.

Used by the flavor and instance list repositories.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.domain.errors import Invalid

_PROBE = sa.select(sa.literal("", sa.String).regexp_match(sa.bindparam("pattern", type_=sa.String)))


class RegexFilterRefused(Invalid):
    """A filter pattern the database cannot compile (400, in the query validation's words)."""

    def __init__(self, parameter: str, pattern: str) -> None:
        super().__init__(
            f"Invalid input for query parameters {parameter}. Value: {pattern}. "
            f"'{pattern}' is not a 'regex'"
        )


def for_database(dialect: str, pattern: str) -> str:
    """``pattern`` as sent to the database: MySQL/MariaDB get every ``|`` escaped, as Nova
    does (its REGEXP refuses a bare ``|``; Nova gives up alternation there)."""
    return pattern.replace("|", "\\|") if dialect == "mysql" else pattern


_PG_INVALID_REGULAR_EXPRESSION = "2201B"
_MYSQL_REGEX_ERRORS = range(3685, 3700)  # MySQL 8's ER_REGEXP_* (ICU)
_MARIADB_REGEX_ERROR = 1139  # ER_REGEXP_ERROR (PCRE2)


def is_regex_error(exc: sa.exc.DBAPIError) -> bool:
    """Whether the database refused a regular expression (rather than failed otherwise)."""
    orig = exc.orig
    if isinstance(orig, sqlite3.OperationalError):
        # SQLite reports any exception of the REGEXP function (re.error) this way.
        return "user-defined function raised exception" in str(orig)
    if getattr(orig, "pgcode", None) == _PG_INVALID_REGULAR_EXPRESSION:
        return True
    code = orig.args[0] if orig is not None and orig.args else None
    return isinstance(code, int) and (code == _MARIADB_REGEX_ERROR or code in _MYSQL_REGEX_ERRORS)


def accepted(engine: sa.Engine, pattern: str) -> bool:
    """Whether the database of ``engine`` compiles ``pattern`` (as :func:`for_database`
    sends it), on a connection of its own so that a failed query's transaction is not used."""
    if engine.dialect.name == "sqlite":
        # SQLite's REGEXP is SQLAlchemy's Python function (re.search): ask re itself, with no
        # second connection (the pool holds one, and a writer's lock would make it wait).
        try:
            re.compile(pattern)
        except re.error:
            return False
        return True
    sent = for_database(engine.dialect.name, pattern)
    try:
        with reader(engine).connect() as conn:
            conn.execute(_PROBE, {"pattern": sent}).all()
    except sa.exc.DBAPIError:
        return False
    return True


@contextmanager
def refused_patterns_as_invalid(engine: sa.Engine, patterns: Mapping[str, str]) -> Iterator[None]:
    """Run a query that filters on ``patterns`` (query parameter -> pattern as the caller gave
    it); the database's refusal of one of them becomes :class:`RegexFilterRefused`."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not is_regex_error(exc):
            raise  # the database itself is failing (unreachable, disk full ...), not a pattern
        for parameter, pattern in patterns.items():
            if not accepted(engine, pattern):
                raise RegexFilterRefused(parameter, pattern) from exc
        raise
