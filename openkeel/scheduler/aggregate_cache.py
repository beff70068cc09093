"""The scheduler's view of host aggregates (hosts and metadata: zones, weight multipliers).

Reloaded from the API DB at each request when one is configured (a few small tables, no
instance data), so zone and multiplier changes apply at once even when nobody casts
``update_aggregates``; the fanout casts update the cached copy for schedulers without an API
DB (tests, or a scheduler fed only by RPC).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from openkeel.domain.aggregates import Aggregate


class AggregateSource(Protocol):
    """Where aggregates are read from (``AggregateRepository`` fits)."""

    def list_all(self) -> list[Aggregate]: ...


def aggregate_from_primitive(data: Mapping[str, Any]) -> Aggregate:
    """An aggregate from its RPC form ``{id, uuid, name, hosts, metadata}``."""
    if "nova_object.data" in data:
        data = data["nova_object.data"]
    return Aggregate(
        id=int(data.get("id") or 0),
        uuid=str(data.get("uuid") or ""),
        name=str(data.get("name") or ""),
        hosts=tuple(str(h) for h in data.get("hosts") or ()),
        metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()},
    )


class AggregateCache:
    """Aggregates by id; ``current()`` is what a request uses."""

    def __init__(self, source: AggregateSource | None = None) -> None:
        self._source = source
        self._lock = threading.Lock()
        self._by_id: dict[int, Aggregate] = {}

    def current(self) -> list[Aggregate]:
        """Every aggregate (re-read from the source when there is one)."""
        if self._source is not None:
            fresh = self._source.list_all()
            with self._lock:
                self._by_id = {agg.id: agg for agg in fresh}
        with self._lock:
            return list(self._by_id.values())

    def update(self, aggregates: Iterable[Aggregate]) -> None:
        with self._lock:
            for agg in aggregates:
                self._by_id[agg.id] = agg

    def delete(self, aggregate: Aggregate) -> None:
        with self._lock:
            self._by_id.pop(aggregate.id, None)
