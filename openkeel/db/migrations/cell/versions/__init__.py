"""Revisions of the cell database tree, oldest first by down_revision."""
