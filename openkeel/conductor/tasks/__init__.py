"""Conductor tasks (Nova's conductor/tasks): each has ``execute()`` and ``rollback()``."""
