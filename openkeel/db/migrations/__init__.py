"""Alembic revision trees: ``api/`` for the API database, ``cell/`` for each cell database."""
