"""Fixtures for the database layer tests: ``db_url`` over SQLite, PostgreSQL and MariaDB."""

from tests.db.backends import database_factory, db_backend, db_url

__all__ = ["database_factory", "db_backend", "db_url"]
