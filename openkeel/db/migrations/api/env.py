"""Alembic environment of the api database tree; see openkeel.db.migrate."""

from alembic import context

from openkeel.db.migrate import run_environment

run_environment(context)
