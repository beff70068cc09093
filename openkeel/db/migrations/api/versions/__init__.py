"""Revisions of the api database tree, oldest first by down_revision."""
