"""One reader transaction per database for a whole request.

A request that reads the same database from several use cases (``GET /servers/{id}``: the
instance, then its volumes and host status) would otherwise pay a connection checkout,
``BEGIN`` and ``ROLLBACK`` for each; ``Readers`` opens one ``reader()`` connection per engine on
first use and closes them all at the end, which also gives the request one snapshot per database.
"""

from __future__ import annotations

from contextlib import ExitStack
from types import TracebackType

import sqlalchemy as sa

from openkeel.db.engine import reader


class Readers:
    """Reader connections opened on demand, one per engine, closed together."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._open: dict[int, sa.Connection] = {}

    def __enter__(self) -> Readers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._open.clear()
        self._stack.close()

    def conn(self, engine: sa.Engine) -> sa.Connection:
        """The request's reader connection to ``engine``."""
        key = id(engine)
        found = self._open.get(key)
        if found is None:
            found = self._open[key] = self._stack.enter_context(reader(engine).connect())
        return found

    def forget(self, engine: sa.Engine) -> None:
        """Drop a connection that failed (a down cell): the next use opens a new one."""
        found = self._open.pop(id(engine), None)
        if found is not None:
            found.invalidate()
