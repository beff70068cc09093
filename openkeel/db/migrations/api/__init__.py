"""Alembic tree for the api database."""
