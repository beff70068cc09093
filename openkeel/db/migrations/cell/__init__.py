"""Alembic tree for the cell database."""
