"""The scheduler's cache of which instances run on which host (Nova's HostManager
instance info), used by the affinity filters and weighers through ``HostState.instances``.

Fed by the compute hosts' fanout casts (update/delete/sync_instance_info), by this
scheduler's own claims (so back-to-back requests see each other before the instances reach
the cell DB), and refreshed per request for the uuids the request names (group members,
same_host/different_host hints) from the cell DBs. Never filled by a scan of instances.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping


class InstanceHostMap:
    """Thread-safe uuid -> host map with a per-host index."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._host_of: dict[str, str] = {}
        self._on_host: dict[str, set[str]] = {}

    def _place(self, uuid: str, host: str | None) -> None:
        previous = self._host_of.pop(uuid, None)
        if previous is not None:
            self._on_host.get(previous, set()).discard(uuid)
        if host is not None:
            self._host_of[uuid] = host
            self._on_host.setdefault(host, set()).add(uuid)

    def add(self, host: str, uuids: Iterable[str]) -> None:
        """Record ``uuids`` as running on ``host`` (update_instance_info, a claim)."""
        with self._lock:
            for uuid in uuids:
                self._place(uuid, host)

    def remove(self, host: str, uuid: str) -> None:
        """Forget ``uuid`` if it is recorded on ``host`` (delete_instance_info)."""
        with self._lock:
            if self._host_of.get(uuid) == host:
                self._place(uuid, None)

    def sync(self, host: str, uuids: Iterable[str]) -> None:
        """Make ``uuids`` exactly what runs on ``host`` (sync_instance_info)."""
        wanted = set(uuids)
        with self._lock:
            for uuid in self._on_host.get(host, set()) - wanted:
                self._place(uuid, None)
            for uuid in wanted:
                self._place(uuid, host)

    def refresh(self, located: Mapping[str, str], gone: Iterable[str]) -> None:
        """Apply what the cell DBs say: ``located`` live instances on a host, ``gone``
        deleted ones. Uuids without a row stay as recorded: they may be in flight between
        this scheduler's claim and the conductor's insert."""
        with self._lock:
            for uuid in gone:
                self._place(uuid, None)
            for uuid, host in located.items():
                self._place(uuid, host)

    def on_host(self, host: str) -> frozenset[str]:
        """The uuids recorded on ``host``."""
        with self._lock:
            return frozenset(self._on_host.get(host, ()))

    def host_of(self, uuid: str) -> str | None:
        with self._lock:
            return self._host_of.get(uuid)
