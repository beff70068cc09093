"""What the servers views render: an instance plus the facts gathered around it in batches.

Built by the listing/lookup use cases (one query per related table per page, never per server);
read by ``openkeel.api.resources.servers.views_*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.domain.instances import Instance


@dataclass(frozen=True)
class AttachedVolume:
    """A volume block device mapping of the server."""

    volume_id: str
    delete_on_termination: bool


@dataclass(frozen=True)
class ServerRecord:
    """One server as the API shows it.

    ``down`` marks a server whose cell did not answer (2.69 minimal record: only the fields
    the API DB knows). ``availability_zone`` is the zone resolved from the host when it has
    one. ``pinned_az``/``scheduler_hints`` come from the request spec (None when it has none).
    ``host_status`` is None when it was not asked for or cannot be told.
    """

    instance: Instance
    volumes: tuple[AttachedVolume, ...] = ()
    availability_zone: str | None = None
    server_groups: tuple[str, ...] = ()
    pinned_az: str | None = None
    scheduler_hints: Mapping[str, Any] | None = None
    host_status: str | None = None
    down: bool = False
