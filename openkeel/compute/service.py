"""The compute role object: one per host (``[DEFAULT] host``), built by openkeel.cmd.

``ComputeService(conf, driver, transport, placement, api_db, cell_db, clock=...)``;
``start()`` connects the driver, registers the service record (cell DB ``services``, binary
nova-compute, topic compute) and the host mapping (API DB), audits resources (compute node +
Placement provider, inventory, traits), reconciles instances left mid-operation, serves RPC on
topic ``compute`` server=<host>, and registers the periodic tasks (run on a background thread,
the heartbeat on one of its own, unless ``start(background=False)``: tests then call
``periodic.run_due()`` / ``heartbeats.run_due()`` after moving a FakeClock). ``stop()`` undoes
it; a graceful stop (``stop_taking_work()``, then ``stop(timeout=)``) first takes no more new work (topic ``compute``, periodic tasks, heartbeat: as Nova, the service
is not disabled, it shows down after ``service_down_time``) while ``compute-alt`` still carries
the follow-ups of its operations in progress, which get ``timeout`` seconds to finish.
"""

from __future__ import annotations

import logging
from pathlib import Path

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.image import ImageService, glance_from_conf
from openkeel.clients.placement import PlacementClient
from openkeel.compute import (
    evacuated,
    periodic_tasks,
    polls,
    reconcile,
    security_groups,
    usage_audit,
)
from openkeel.compute.endpoint import ComputeEndpoint
from openkeel.compute.host import ComputeHost
from openkeel.compute.lifecycle import LifecycleHandler
from openkeel.compute.operations import remote_console, rescue, shelve
from openkeel.compute.resource_tracker import ResourceTracker
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.image_files import ImageFiles
from openkeel.db.records import InstanceRecords
from openkeel.db.repositories import host_mappings, services
from openkeel.db.schema import api as api_schema
from openkeel.network import NetworkAdapter, get_network_adapter
from openkeel.notifications.emitter import Notifier, notifier_from_conf
from openkeel.notifications.emitter import close as close_notifier
from openkeel.notifications.instance_updates import SaveNotifier
from openkeel.notifications.versioned import service_status
from openkeel.rpc.clients.compute import ALT_TOPIC
from openkeel.rpc.clients.conductor import ConductorRpcClient
from openkeel.rpc.message import Target
from openkeel.rpc.server import RpcServer, wait_quiet
from openkeel.rpc.transport import Transport
from openkeel.runtime.clock import Clock, SystemClock
from openkeel.runtime.periodic import PeriodicRunner
from openkeel.virt.driver import ComputeDriver
from openkeel.volume.factory import get_volume_adapter

LOG = logging.getLogger(__name__)

BINARY = "nova-compute"
TOPIC = "compute"
SERVICE_VERSION = 74  # Nova 34.0.0's service version


def snapshot_images(conf: cfg.ConfigOpts, api_db: sa.Engine) -> ImageService:
    """Where this host uploads snapshots: Glance when ``[glance]`` locates it, else the
    embedded catalog on the API database with its data under ``<state_path>/images``, where
    the all-in-one's image API serves them (decision 0034: one process holds the files)."""
    glance = glance_from_conf(conf.glance)
    if glance is not None:
        return glance
    return EmbeddedImageCatalog(api_db, ImageFiles(Path(conf.state_path) / "images"))


class ComputeService:
    """Everything one compute host runs."""

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        driver: ComputeDriver,
        transport: Transport,
        placement: PlacementClient,
        api_db: sa.Engine,
        cell_db: sa.Engine,
        *,
        clock: Clock | None = None,
        network: NetworkAdapter | None = None,
        cell_uuid: str | None = None,
        host: str | None = None,
        images: ImageService | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        self.conf = conf
        self.transport = transport
        self.api_db = api_db
        self.cell_db = cell_db
        self.cell_uuid = cell_uuid
        self.clock = clock or SystemClock()
        name: str = host or conf.host
        notifier = (notifier or notifier_from_conf(conf)).prepare("nova-compute", name)
        self.host = ComputeHost(
            conf=conf,
            host=name,
            driver=driver,
            network=network or get_network_adapter(conf, api_db),
            placement=placement,
            records=InstanceRecords(
                cell_db,
                self.clock,
                SaveNotifier.of(notifier, conf.instance_usage_audit_period, self.clock.now),
            ),
            api_db=api_db,
            clock=self.clock,
            conductor=ConductorRpcClient(transport),
            tracker=ResourceTracker(conf, name, driver, placement, cell_db),
            images=images or snapshot_images(conf, api_db),
            volumes=get_volume_adapter(conf, api_db),
            notifier=notifier,
        )
        self.periodic = PeriodicRunner(self.clock)
        # The heartbeat has a thread of its own (Nova's report_state timer): a long periodic
        # task (a power-state sync or resource audit against a slow cluster, an image cache
        # pass) must not make the host look down, and periodic_enable = False keeps it.
        self.heartbeats = PeriodicRunner(self.clock, "compute-heartbeat")
        self.service_id: int | None = None
        self.lifecycle: LifecycleHandler | None = None
        self._reported_down = False
        self._server: RpcServer | None = None
        self._alt_server: RpcServer | None = None

    @property
    def hostname(self) -> str:
        return self.host.host

    def start(self, *, background: bool = True) -> ComputeService:
        """Register, audit, reconcile, serve RPC, schedule periodic tasks."""
        self.host.driver.init_host(self.hostname)
        try:
            self.service_id = self._register_service()
            self._map_host()
            self.host.tracker.update_available_resource(self.service_id)
            evacuated.destroy_evacuated_instances(self.host)
            reconcile.init_instances(self.host)
            self.lifecycle = LifecycleHandler(self.host).start()
            endpoints = [ComputeEndpoint(self.host)]
            self._server = RpcServer(
                self.transport, Target(TOPIC, server=self.hostname), endpoints
            ).start()
            self._alt_server = RpcServer(
                self.transport, Target(ALT_TOPIC, server=self.hostname), endpoints
            ).start()
        except BaseException:
            # A start that fails still releases what init_host opened (the driver's watch
            # thread and connections), so a caller that retries or exits leaks nothing.
            self._stop_lifecycle()
            self.host.driver.cleanup_host(self.hostname)
            raise
        self._register_tasks()
        if background:
            self.heartbeats.start()
        if background and self.conf.periodic_enable:
            self.periodic.start()
        return self

    def stop_taking_work(self) -> None:
        """The first step of a graceful stop: no periodic task (heartbeat included) and no
        new message on topic ``compute``; what is running goes on and ``compute-alt`` still
        delivers its follow-ups."""
        self.periodic.stop()
        self.heartbeats.stop()
        if self._server is not None:
            self._server.stop_listening()

    def stop(self, *, drain: bool = True, timeout: float | None = None) -> bool:
        """Stop serving. With ``drain`` the operations in progress get ``timeout`` seconds
        (None: however long) to finish; ``drain=False`` abandons them, as a crash would. What
        is cut off either way is settled by the next start on this host (reconcile,
        move_recovery). The driver then releases its threads and connections. True when
        nothing was left unfinished."""
        self.stop_taking_work()
        finished = self._drain(timeout) if drain else False
        for server in (self._server, self._alt_server):
            if server is not None:
                server.stop(drain=False)
        self._server = self._alt_server = None
        self._stop_lifecycle()
        self.host.driver.cleanup_host(self.hostname)
        close_notifier(self.host.notifier)  # a later send reconnects
        return finished

    def _drain(self, timeout: float | None) -> bool:
        """Wait until neither server has a message in hand (a follow-up on ``compute-alt``
        may arrive while the first operation still runs), up to ``timeout`` seconds."""
        servers = self.rpc_servers
        if wait_quiet(servers, timeout):
            return True
        LOG.warning("%s: %s operations still running at the shutdown timeout; the next start "
                    "settles them", self.hostname, sum(s.busy for s in servers))  # fmt: skip
        return False

    @property
    def rpc_servers(self) -> list[RpcServer]:
        """The RPC servers running (``compute`` and ``compute-alt``)."""
        return [s for s in (self._server, self._alt_server) if s is not None]

    def _stop_lifecycle(self) -> None:
        if self.lifecycle is not None:
            self.lifecycle.stop()
            self.lifecycle = None

    # --- registration ----------------------------------------------------------------------

    def _register_service(self) -> int:
        created = False
        with self.cell_db.begin() as conn:
            record = services.get_by_host_and_binary(conn, self.hostname, BINARY)
            if record is None:
                record = services.create_service(
                    conn,
                    self.hostname,
                    BINARY,
                    topic=TOPIC,
                    version=SERVICE_VERSION,
                    last_seen_up=self.clock.now(),
                )
                created = True
            else:
                services.update_service(
                    conn, record.id, version=SERVICE_VERSION, last_seen_up=self.clock.now()
                )
        if created:
            self.host.notifier.service("create", service_status(record))
        return record.id

    def _map_host(self) -> None:
        cell_uuid = self.cell_uuid or self._cell_of_database()
        with self.api_db.begin() as conn:
            host_mappings.ensure(conn, self.hostname, cell_uuid)

    def _cell_of_database(self) -> str:
        url = self.cell_db.url.render_as_string(hide_password=False)
        cells = api_schema.cell_mappings
        query = sa.select(cells.c.uuid).where(cells.c.database_connection == url)
        with self.api_db.connect() as conn:
            found = conn.execute(query).scalar()
        if found is None:
            raise RuntimeError(f"No cell mapping has the database of compute {self.hostname}")
        return str(found)

    # --- periodic tasks --------------------------------------------------------------------

    def _register_tasks(self) -> None:
        conf, host = self.conf, self.host
        self.heartbeats.add("heartbeat", self.heartbeat, conf.report_interval)
        add = self.periodic.add
        add("update_available_resource", self.update_available_resource,
            conf.update_resources_interval)  # fmt: skip
        add("sync_power_states", lambda: periodic_tasks.sync_power_states(host),
            conf.sync_power_state_interval)  # fmt: skip
        add("check_instance_build_time", lambda: periodic_tasks.check_build_timeouts(host), 0)
        add(
            "cleanup_running_deleted_instances",
            lambda: periodic_tasks.cleanup_running_deleted_instances(host),
            conf.running_deleted_instance_poll_interval or -1,
        )  # fmt: skip  (0: never)
        add("reclaim_queued_deletes", lambda: periodic_tasks.reclaim_queued_deletes(host), 0)
        add("instance_usage_audit", lambda: usage_audit.instance_usage_audit(host), 0)
        add("poll_rescued_instances", lambda: rescue.poll_rescued_instances(host), 0)
        add("poll_unconfirmed_resizes", lambda: polls.poll_unconfirmed_resizes(host), 0)
        heal = conf.heal_instance_info_cache_interval
        add("heal_instance_info_cache", polls.InfoCacheHealer(host), heal if heal > 0 else -1)
        add(
            "poll_shelved_instances",
            lambda: shelve.offload_shelved_instances(host),
            conf.shelved_poll_interval if conf.shelved_poll_interval > 0 else -1,
        )  # fmt: skip  (0 or less: never)
        add(
            "image_cache_manager_pass",
            lambda: periodic_tasks.run_image_cache_manager_pass(host),
            conf.image_cache.manager_interval,
        )  # fmt: skip  (0: every tick, -1: never)
        add(
            "cleanup_expired_console_auth_tokens",
            lambda: remote_console.cleanup_expired_console_auth_tokens(host),
            conf.instance_delete_interval,
        )  # fmt: skip  (0: every tick, negative: never)
        add(
            "refresh_security_groups",
            lambda: security_groups.refresh_all(host),
            host.driver.security_group_refresh_interval,
        )  # fmt: skip  (negative: never)
        add(
            "recover_stale_operations",
            lambda: reconcile.recover_stale_operations(host),
            0,
        )

    def heartbeat(self) -> None:
        """Bump report_count and last_seen_up of the service record, unless the driver says
        the hypervisor is down (the service then shows down after service_down_time)."""
        if self.service_id is None:
            return
        if not self.host.driver.host_up():
            if not self._reported_down:
                LOG.warning("Hypervisor of %s is down: the service stops reporting", self.hostname)  # fmt: skip
            self._reported_down = True
            return
        if self._reported_down:
            LOG.warning("Hypervisor of %s is up again", self.hostname)
            self._reported_down = False
        with self.cell_db.begin() as conn:
            record = services.get_service(conn, self.service_id)
            if record is None:
                LOG.warning("Service record of %s is gone; re-registering", self.hostname)
                self.service_id = None
            else:
                services.update_service(
                    conn,
                    record.id,
                    report_count=record.report_count + 1,
                    last_seen_up=self.clock.now(),
                )
        if self.service_id is None:
            self.service_id = self._register_service()

    def update_available_resource(self) -> None:
        """Resource audit plus orphan allocation cleanup."""
        self.host.tracker.update_available_resource(self.service_id)
        periodic_tasks.remove_orphan_allocations(self.host)
