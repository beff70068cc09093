"""What the API handlers may reach: settings and databases, built once per process.

Use cases are constructed from this (``FlavorService(req.services)``); handlers never open
connections themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.api.caches import ApiCaches
from openkeel.clients.image import ImageService
from openkeel.clients.placement import PlacementClient
from openkeel.notifications.emitter import Notifier
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.clients.conductor import ConductorRpcClient


@dataclass
class ApiServices:
    """Process-wide dependencies of the API role."""

    conf: cfg.ConfigOpts
    api_db: sa.Engine
    # Cell databases by cell mapping uuid (cell0 included), for counting and listing.
    cell_dbs: dict[str, sa.Engine] = field(default_factory=dict)
    # The image service; None: chosen from [glance] (embedded catalog when no endpoint).
    images: ImageService | None = None
    # RPC clients of the other roles (None in an API-only process: builds stay in BUILD,
    # deletes of unscheduled servers are local). Wired by the composition roots.
    conductor: ConductorRpcClient | None = None
    compute: ComputeRpcClient | None = None
    # Placement, for what the API does itself as Nova's does: freeing the allocations of a
    # server deleted while its host is down. None: left to the host's orphan audit.
    placement: PlacementClient | None = None
    # Read caches of this process (instance locations, host zones): openkeel/api/caches.py.
    caches: ApiCaches = field(default_factory=ApiCaches)
    # Notifications of the API (publisher nova-api:<host>); the default sends nothing.
    notifier: Notifier = field(default_factory=Notifier)
