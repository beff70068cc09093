"""Service records of the top-level roles: the home cell, registration, heartbeats that bump
report_count, re-registration after a delete, a database outage survived."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from openkeel.db import migrate
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import make_engine
from openkeel.db.repositories import services
from openkeel.db.service_presence import ServicePresence, home_cell
from openkeel.runtime.clock import FakeClock


def _cell(tmp_path: Path, name: str) -> sa.Engine:
    engine = make_engine(f"sqlite:///{tmp_path / name}")
    migrate.upgrade(engine, "cell")
    return engine


def test_home_cell(tmp_path: Path) -> None:
    cell0, cell1 = _cell(tmp_path, "c0.sqlite"), _cell(tmp_path, "c1.sqlite")
    cells = {CELL0_UUID: cell0, "c1": cell1}
    assert home_cell(cells, f"sqlite:///{tmp_path / 'c0.sqlite'}") is cell0
    assert home_cell(cells, None) is cell1
    assert home_cell({CELL0_UUID: cell0}, None) is cell0
    assert home_cell({}, None) is None


def test_register_report_and_come_back(tmp_path: Path) -> None:
    cell = _cell(tmp_path, "c1.sqlite")
    clock = FakeClock()
    presence = ServicePresence(cell, "ctl", "nova-scheduler", clock)
    first = presence.register()
    clock.advance(10)
    presence.report()
    with cell.connect() as conn:
        record = services.get_service(conn, first)
    assert record is not None
    assert (record.topic, record.report_count, record.last_seen_up) == ("scheduler", 1, clock.now())
    with cell.begin() as conn:
        services.destroy_service(conn, record)
    presence.report()
    with cell.connect() as conn:
        again = services.get_by_host_and_binary(conn, "ctl", "nova-scheduler")
    assert again is not None and again.id != first
    cell.dispose()
    (tmp_path / "c1.sqlite").unlink()
    (tmp_path / "c1.sqlite").mkdir()  # the database can no longer be opened
    presence.report()  # logged, not raised
