"""The service record of a conductor or scheduler and its heartbeat (Nova's Service object with
the DB servicegroup driver: ``report_state`` bumps ``report_count`` and ``last_seen_up``).

Used by the conductor and scheduler roles (compute keeps its own, which also consults the
hypervisor). The record lives in the role's home cell database: the cell whose database is
``[database] connection`` (where Nova's services write theirs), else the first cell that is
not cell0. A record deleted meanwhile (``DELETE /os-services/{id}``) is created again at the
next heartbeat, as Nova's service re-registers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import sqlalchemy as sa

from openkeel.db.cells import CELL0_UUID
from openkeel.db.repositories import services
from openkeel.runtime.clock import Clock

LOG = logging.getLogger(__name__)

SERVICE_VERSION = 74  # Nova 34.0.0's service version


def home_cell(cells: Mapping[str, sa.Engine], database_url: str | None) -> sa.Engine | None:
    """The cell database a top-level service records itself in (None: no cell at all)."""
    for engine in cells.values():
        if database_url and engine.url.render_as_string(hide_password=False) == database_url:
            return engine
    others = [e for uuid, e in cells.items() if uuid != CELL0_UUID]
    return others[0] if others else next(iter(cells.values()), None)


class ServicePresence:
    """One service's record: ``register()`` at start, ``report()`` every report_interval."""

    def __init__(self, engine: sa.Engine, host: str, binary: str, clock: Clock) -> None:
        self.engine = engine
        self.host = host
        self.binary = binary
        self.clock = clock
        self.service_id: int | None = None

    def register(self) -> int:
        """Create the record (or refresh the existing one) and return its id."""
        with self.engine.begin() as conn:
            record = services.get_by_host_and_binary(conn, self.host, self.binary)
            if record is None:
                record = services.create_service(
                    conn, self.host, self.binary, version=SERVICE_VERSION,
                    last_seen_up=self.clock.now(),
                )  # fmt: skip
            else:
                services.update_service(
                    conn, record.id, version=SERVICE_VERSION, last_seen_up=self.clock.now()
                )
        self.service_id = record.id
        return record.id

    def report(self) -> None:
        """The heartbeat; never raises (a database outage is logged, the next one retries)."""
        try:
            with self.engine.begin() as conn:
                record = services.get_service(conn, self.service_id) if self.service_id else None
                if record is not None:
                    services.update_service(
                        conn, record.id, report_count=record.report_count + 1,
                        last_seen_up=self.clock.now(),
                    )  # fmt: skip
                    return
            LOG.warning("Service record of %s on %s is gone; re-registering", self.binary, self.host)  # fmt: skip
            self.register()
        except sa.exc.SQLAlchemyError:
            LOG.exception("Heartbeat of %s on %s failed; it runs again later", self.binary, self.host)  # fmt: skip
