"""Nova's last completed audit period for each unit and offset (pure date arithmetic)."""

from __future__ import annotations

from datetime import datetime as dt

import pytest

from openkeel.domain.audit_periods import last_completed_audit_period


@pytest.mark.parametrize(
    ("unit", "now", "begin", "end"),
    [
        ("hour", dt(2026, 12, 4, 6, 30), dt(2026, 12, 4, 5), dt(2026, 12, 4, 6)),
        ("hour", dt(2026, 12, 4, 6, 0), dt(2026, 12, 4, 4), dt(2026, 12, 4, 5)),
        ("hour@15", dt(2026, 12, 4, 6, 10), dt(2026, 12, 4, 4, 15), dt(2026, 12, 4, 5, 15)),
        ("day", dt(2026, 12, 4, 6), dt(2026, 12, 3), dt(2026, 12, 4)),
        ("day@18", dt(2026, 12, 4, 6), dt(2026, 12, 2, 18), dt(2026, 12, 3, 18)),
        ("month", dt(2026, 12, 4), dt(2026, 11, 1), dt(2026, 12, 1)),
        ("month", dt(2026, 1, 1), dt(2025, 11, 1), dt(2025, 12, 1)),
        ("month@15", dt(2026, 1, 20), dt(2025, 12, 15), dt(2026, 1, 15)),
        ("year", dt(2026, 12, 4), dt(2025, 1, 1), dt(2026, 1, 1)),
        ("year@3", dt(2026, 2, 1), dt(2024, 3, 1), dt(2025, 3, 1)),
    ],
)  # fmt: skip
def test_periods(unit: str, now: dt, begin: dt, end: dt) -> None:
    assert last_completed_audit_period(unit, now) == (begin, end)


def test_same_as_nova() -> None:
    nova_utils = pytest.importorskip("nova.utils")
    for unit in ("hour", "hour@7", "day", "day@3", "month", "month@28", "year", "year@12"):
        for now in (dt(2026, 1, 1), dt(2026, 3, 31, 23, 59), dt(2026, 12, 4, 6, 7, 8)):
            assert last_completed_audit_period(unit, now) == nova_utils.last_completed_audit_period(unit, now), (unit, now)  # fmt: skip
