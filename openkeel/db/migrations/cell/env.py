"""Alembic environment of the cell database tree; see openkeel.db.migrate."""

from alembic import context

from openkeel.db.migrate import run_environment

run_environment(context)
