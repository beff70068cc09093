"""Per-process read caches of the API role, each safe by construction (see each class).

``GET /servers/{id}`` costs a few hundred microseconds of SQL; two of its lookups need not
hit a database on every request:

- where an instance lives (``InstanceLocations``): an instance mapping's cell and owner never
  change once conductor has placed the instance, so they are kept after the first read;
- the availability zones of compute hosts (``HostZones``): Nova itself caches them per process
  for an hour (``nova.availability_zones``, ``AZ_CACHE_SECONDS``) and resets the cache when
  this process changes an aggregate; OpenKeel does the same.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.readers import Readers
from openkeel.db.repositories.availability_zones import zones_by_host

AZ_CACHE_SECONDS = 60 * 60
"""How long a host's zones are kept (Nova's value)."""

LOCATIONS_KEPT = 100_000
"""Most instance locations kept (least recently used dropped first); ~200 bytes each."""


@dataclass(frozen=True)
class InstanceLocation:
    """The immutable part of a placed instance's mapping."""

    cell_uuid: str
    project_id: str
    user_id: str | None
    created_at: Any


class InstanceLocations:
    """uuid → ``InstanceLocation`` of instances already placed in a cell.

    Only mappings with a cell are kept: before that, the build request is the truth. A kept
    location may outlive its instance (deleted, archived); readers then find no row in the
    cell and answer 404, as they would without the cache.
    """

    def __init__(self, capacity: int = LOCATIONS_KEPT) -> None:
        self._capacity = capacity
        self._found: OrderedDict[str, InstanceLocation] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, uuid: str) -> InstanceLocation | None:
        with self._lock:
            found = self._found.get(uuid)
            if found is not None:
                self._found.move_to_end(uuid)
            return found

    def keep(self, uuid: str, location: InstanceLocation) -> None:
        with self._lock:
            self._found[uuid] = location
            self._found.move_to_end(uuid)
            while len(self._found) > self._capacity:
                self._found.popitem(last=False)


class HostZones:
    """host → the ``availability_zone`` values of its aggregates, kept ``ttl`` seconds."""

    def __init__(
        self, ttl: float = AZ_CACHE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._found: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()
        self._generation = 0  # bumped by reset(): a load that raced a reset is not kept

    def zones(
        self, api_db: sa.Engine, hosts: Iterable[str], readers: Readers | None = None
    ) -> dict[str, set[str]]:
        """The zones of ``hosts`` (hosts in no zone are left out, as ``zones_by_host``);
        a miss reads through ``readers`` when given."""
        now = self._clock()
        out: dict[str, set[str]] = {}
        missing: list[str] = []
        with self._lock:
            for host in set(hosts):
                kept = self._found.get(host)
                if kept is None or now - kept[0] > self._ttl:
                    missing.append(host)
                elif kept[1]:
                    out[host] = set(kept[1])
            generation = self._generation
        if missing:
            if readers is not None:
                loaded = zones_by_host(readers.conn(api_db), missing)
            else:
                with reader(api_db).connect() as conn:
                    loaded = zones_by_host(conn, missing)
            with self._lock:
                keep = generation == self._generation
                for host in missing:
                    zones = frozenset(loaded.get(host, ()))
                    if keep:
                        self._found[host] = (now, zones)
                    if zones:
                        out[host] = set(zones)
        return out

    def reset(self) -> None:
        """Forget every host (an aggregate changed)."""
        with self._lock:
            self._found.clear()
            self._generation += 1


@dataclass
class ApiCaches:
    """The caches of one API process."""

    locations: InstanceLocations = field(default_factory=InstanceLocations)
    host_zones: HostZones = field(default_factory=HostZones)
