"""What every compute operation needs: one ``ComputeHost`` per compute service.

Built by ``ComputeService`` (openkeel.compute.service) and passed to the operations
(openkeel.compute.operations.*), the periodic tasks and start-up reconciliation, so those stay
plain functions that tests can call directly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.image import ImageService
from openkeel.clients.placement import PlacementClient
from openkeel.compute.event_waiters import InstanceEventWaiters
from openkeel.compute.resource_tracker import ResourceTracker
from openkeel.db.records import InstanceRecords
from openkeel.network.adapter import InstanceNetRef, NetworkAdapter
from openkeel.notifications.emitter import Notifier
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.runtime.clock import Clock
from openkeel.virt.driver import ComputeDriver
from openkeel.volume.adapter import VolumeAdapter


class InstanceLocks:
    """One lock per instance uuid (Nova's ``synchronized(instance.uuid)``)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}

    @contextmanager
    def hold(self, uuid: str) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(uuid, threading.RLock())
        with lock:
            yield

    @contextmanager
    def try_hold(self, uuid: str) -> Iterator[bool]:
        """Hold the instance's lock if no other thread does; yields whether it is held."""
        with self._guard:
            lock = self._locks.setdefault(uuid, threading.RLock())
        held = lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                lock.release()


@dataclass
class ComputeHost:
    """The collaborators of one compute service."""

    conf: cfg.ConfigOpts
    host: str
    driver: ComputeDriver
    network: NetworkAdapter
    placement: PlacementClient
    records: InstanceRecords
    api_db: sa.Engine
    clock: Clock
    conductor: ConductorRpcClient
    tracker: ResourceTracker
    # Where snapshots are uploaded (Glance or the embedded catalog); None: none configured.
    images: ImageService | None = None
    # Cinder as compute uses it (attachments); None: no volume service.
    volumes: VolumeAdapter | None = None
    locks: InstanceLocks = field(default_factory=InstanceLocks)
    # Operations waiting for external events (openkeel.compute.external_events).
    events: InstanceEventWaiters = field(default_factory=InstanceEventWaiters)
    # Notifications of this host (publisher nova-compute:<host>); the default sends nothing.
    notifier: Notifier = field(default_factory=Notifier)
    # How the host waits between polls (a volume being created); tests pass their own.
    sleep: Callable[[float], None] = time.sleep

    def net_ref(
        self,
        uuid: str,
        project_id: str,
        security_groups: tuple[str, ...] = (),
        provider_mapping: Mapping[str, tuple[str, ...]] | None = None,
    ) -> InstanceNetRef:
        return InstanceNetRef(uuid, project_id, self.host, security_groups, provider_mapping)
