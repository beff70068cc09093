"""The metadata service's cache of servers' metadata, ``[api] metadata_cache_expiration``
seconds per entry (0: nothing is cached); time from an injected clock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from openkeel.runtime.clock import Clock, SystemClock

V = TypeVar("V")


class ExpiringCache(Generic[V]):
    """Values by key, each forgotten ``ttl`` seconds after it was kept."""

    def __init__(self, ttl: int, clock: Clock | None = None) -> None:
        self._ttl = timedelta(seconds=ttl)
        self._clock = clock or SystemClock()
        self._entries: dict[str, tuple[datetime, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        now = self._clock.now()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= now:
                del self._entries[key]
                return None
            return entry[1]

    def keep(self, key: str, value: V) -> None:
        if self._ttl <= timedelta(0):
            return
        with self._lock:
            self._entries[key] = (self._clock.now() + self._ttl, value)

    def forget(self, matches: Callable[[V], bool]) -> None:
        """Drop every entry whose value ``matches``."""
        with self._lock:
            for key in [k for k, (_, v) in self._entries.items() if matches(v)]:
                del self._entries[key]
