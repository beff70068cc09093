"""Host aggregates as the API sees them: a named set of hosts with string metadata, one key
of which (``availability_zone``) places the hosts in a zone. Built by the aggregate
repository, rendered by the os-aggregates views."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

AZ_KEY = "availability_zone"


@dataclass(frozen=True)
class Aggregate:
    """One aggregate with its hosts (in insertion order) and metadata."""

    id: int
    uuid: str
    name: str
    hosts: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @property
    def availability_zone(self) -> str | None:
        """The zone named in the metadata, or None."""
        return self.metadata.get(AZ_KEY)
