"""Time for the compute role: an injectable clock so tests move time instead of sleeping.

``SystemClock`` is the real one; ``FakeClock`` (tests, simulations) only moves on ``advance``.
Times are naive UTC datetimes, as Nova stores them in its databases.
"""

from __future__ import annotations

import datetime
import threading
from typing import Protocol


class Clock(Protocol):
    """Now, as a naive UTC datetime."""

    def now(self) -> datetime.datetime: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class FakeClock:
    """A clock that stands still until ``advance`` moves it."""

    def __init__(self, start: datetime.datetime | None = None) -> None:
        self._now = start or SystemClock().now()
        self._lock = threading.Lock()

    def now(self) -> datetime.datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime.datetime:
        with self._lock:
            self._now += datetime.timedelta(seconds=seconds)
            return self._now
