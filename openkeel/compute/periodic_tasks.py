"""The compute role's periodic tasks (registered on a PeriodicRunner by ComputeService).

- power state sync (``sync_power_state_interval``): Nova's _sync_instance_power_state decisions;
- build timeout (``instance_build_timeout``): builds older than it go to ERROR with a fault;
- reclaim (``reclaim_instance_interval``): soft-deleted instances older than it are deleted;
- orphan allocations: Placement consumers on this host's providers without a live instance.
Heartbeat and resource audit live on the service (openkeel.compute.service).
"""

from __future__ import annotations

import datetime
import logging

import sqlalchemy as sa

from openkeel.clients.image import Caller, ImageNotFound
from openkeel.clients.placement_errors import PlacementError
from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import delete, power
from openkeel.compute.operations.build import power_state_of
from openkeel.compute.operations.outcome import free_allocations, set_error
from openkeel.db.engine import reader
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import (
    Instance,
    InstanceNotFound,
    InstanceUpdate,
)
from openkeel.domain.migrations import CONFIRMED, ERROR, REVERTED
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)

BUILD_TIMEOUT_MESSAGE = "Instance build timed out. Set to error state."


class BuildTimedOut(ComputeError):
    """Fault of a build that exceeded ``instance_build_timeout``."""

    def __init__(self) -> None:
        super().__init__(BUILD_TIMEOUT_MESSAGE)


def _context() -> CallContext:
    return CallContext(roles=("admin",))


def sync_power_states(host: ComputeHost) -> None:
    """Compare each idle instance's power state with the driver and act as Nova does."""
    for listed in host.records.on_host(host.host):
        if listed.task_state is not None:
            continue
        # Under the instance's lock, as Nova's query_driver_power_state_and_sync: the driver's
        # state and the record are read together, so a lifecycle event handled meanwhile
        # cannot write back what was true before this sync acted (instances busy with an
        # operation were skipped above, by their task state).
        with host.locks.hold(listed.uuid):
            try:
                instance = host.records.get(listed.uuid)
                if instance.task_state is None and instance.host == host.host:
                    sync_instance_power_state(host, instance, power_state_of(host, instance))
            except InstanceNotFound:
                continue
            except Exception:
                LOG.exception("Power state sync of %s failed", listed.uuid)


def sync_instance_power_state(host: ComputeHost, instance: Instance, actual: PowerState) -> None:
    """One instance: record the driver's power state, stop guests that should not run."""
    if instance.power_state != int(actual):
        try:
            instance = host.records.update(
                instance.uuid, InstanceUpdate(power_state=int(actual)), expected_task_state=None
            )
        except ComputeError:
            return  # an operation started meanwhile: it owns the instance now
    stopped = actual in (PowerState.SHUTDOWN, PowerState.CRASHED)
    vm_state = instance.vm_state
    if vm_state == VmState.ACTIVE and (stopped or actual == PowerState.SUSPENDED):
        LOG.warning("Instance %s shut down by itself; calling the stop API", instance.uuid)
        _force_stop(host, instance)
    elif vm_state == VmState.STOPPED and actual not in (
        PowerState.NOSTATE,
        PowerState.SHUTDOWN,
        PowerState.CRASHED,
    ):
        LOG.warning("Instance %s is not stopped; calling the stop API", instance.uuid)
        _force_stop(host, instance)
    elif vm_state == VmState.PAUSED and stopped:
        LOG.warning("Paused instance %s shut down by itself; calling the stop API", instance.uuid)
        _force_stop(host, instance)


def _force_stop(host: ComputeHost, instance: Instance) -> None:
    try:
        host.records.update(
            instance.uuid,
            InstanceUpdate(task_state=TaskState.POWERING_OFF.value),
            expected_task_state=None,
        )
    except ComputeError as exc:  # another operation took the instance meanwhile: it owns it
        LOG.warning("Instance %s not stopped by the power state sync: %s", instance.uuid, exc)
        return
    power.stop(host, _context(), instance.uuid, clean_shutdown=False)


def cleanup_running_deleted_instances(host: ComputeHost) -> list[str]:
    """Guests (and what guests left) on this host whose server is deleted: Nova's
    ``running_deleted_instance_action`` (reap: destroy; shutdown: power off; log). Covers a
    delete that could not reach the guest and a server deleted without a host. Servers this
    cell does not know are left alone (another deployment's). Returns the uuids acted on."""
    action = host.conf.running_deleted_instance_action
    if action == "noop":
        return []
    timeout = host.conf.running_deleted_instance_timeout
    cutoff = host.clock.now() - datetime.timedelta(seconds=timeout)
    acted = []
    for uuid in sorted({*host.driver.list_instance_uuids(), *host.driver.list_leftover_uuids()}):
        try:
            instance = host.records.get(uuid, read_deleted="yes")
        except InstanceNotFound:
            continue
        if not instance.deleted:
            continue
        if timeout and instance.deleted_at is not None and instance.deleted_at > cutoff:
            continue  # deleted too recently
        LOG.warning("Server %s is deleted but its guest is still on %s: %s", uuid, host.host, action)  # fmt: skip
        if action == "log":
            continue
        ref = guest.instance_ref(host.conf, instance)
        try:
            with host.locks.hold(uuid):
                if action == "shutdown":
                    host.driver.power_off(ref)
                else:
                    host.driver.destroy(ref)
        except Exception:
            LOG.exception("Could not %s the guest of deleted server %s", action, uuid)
            continue
        acted.append(uuid)
    return acted


def check_build_timeouts(host: ComputeHost) -> None:
    """Builds on this host older than ``instance_build_timeout`` go to ERROR with a fault."""
    timeout = host.conf.instance_build_timeout
    if not timeout:
        return
    cutoff = host.clock.now() - datetime.timedelta(seconds=timeout)
    for instance in host.records.on_host(host.host):
        if instance.vm_state != VmState.BUILDING or instance.created_at is None:
            continue
        if instance.created_at < cutoff:
            LOG.warning("Instance %s: %s", instance.uuid, BUILD_TIMEOUT_MESSAGE)
            set_error(host, instance.uuid, BuildTimedOut())


def reclaim_queued_deletes(host: ComputeHost) -> None:
    """Really delete soft-deleted instances older than ``reclaim_instance_interval``."""
    interval = host.conf.reclaim_instance_interval
    if interval <= 0:
        return
    cutoff = host.clock.now() - datetime.timedelta(seconds=interval)
    for instance in host.records.soft_deleted_before(cutoff):
        if instance.host == host.host and instance.task_state is None:
            delete.terminate(host, _context(), instance.uuid)


def remove_orphan_allocations(host: ComputeHost) -> list[str]:
    """Delete allocations on this host's providers held by consumers with no live instance.

    A consumer still being scheduled (its build request exists, no instance row yet) keeps
    its allocation, and so does a resize or migration in flight (its uuid holds the source
    side). Liveness is decided with one query per table for all consumers at once, so the
    task costs the same whether the host runs ten servers or a thousand.
    """
    found: dict[str, str] = {}
    for provider in host.tracker.provider_uuids():
        try:
            for consumer in host.placement.get_provider_allocations(provider):
                found[consumer] = provider
        except PlacementError:
            LOG.exception("Could not read the allocations of provider %s", provider)
    orphans = set(found) - _live_consumers(host, set(found))
    for consumer in sorted(orphans):
        LOG.warning("Deleting orphan allocation of %s on %s", consumer, found[consumer])
        free_allocations(host, consumer)
    return sorted(orphans)


MIGRATION_DONE = frozenset({CONFIRMED, REVERTED, ERROR})


def _live_consumers(host: ComputeHost, consumers: set[str]) -> set[str]:
    """The consumers among ``consumers`` that are a live instance, a build request, or a
    migration in flight."""
    if not consumers:
        return set()
    wanted = sorted(consumers)
    # Build requests first: the conductor creates the instance row before it deletes the build
    # request, so a consumer whose build request is gone by now has its row visible below.
    # (Reading the cell first raced a build's hand-over and freed a building server's claim.)
    requests = api_schema.build_requests
    with reader(host.api_db).connect() as api:
        live = set(
            api.execute(
                sa.select(requests.c.instance_uuid).where(requests.c.instance_uuid.in_(wanted))
            ).scalars()
        )
    inst, mig = cell_schema.instances, cell_schema.migrations
    with reader(host.records.db).connect() as cell:
        live |= set(
            cell.execute(
                sa.select(inst.c.uuid).where(inst.c.uuid.in_(wanted), inst.c.deleted == 0)
            ).scalars()
        )
        # A reverted migration still holds the source claim until the source has finished
        # the revert (its instance leaves task resize_reverting): that claim goes back to it.
        reverting = sa.exists().where(
            inst.c.uuid == mig.c.instance_uuid,
            inst.c.deleted == 0,
            inst.c.task_state == TaskState.RESIZE_REVERTING.value,
        )
        live |= set(
            cell.execute(
                sa.select(mig.c.uuid).where(
                    mig.c.uuid.in_(wanted),
                    mig.c.deleted == 0,
                    mig.c.status.not_in(sorted(MIGRATION_DONE))
                    | ((mig.c.status == REVERTED) & reverting),
                )
            ).scalars()
        )
    return live


def run_image_cache_manager_pass(host: ComputeHost) -> list[str]:
    """Nova's ``_run_image_cache_manager_pass``: the driver removes what it keeps for images
    the image service has deleted (asked one image at a time; an image service that cannot
    be reached keeps everything until the next pass). The image ids cleaned up."""
    images = host.images
    if images is None:
        return []
    caller = Caller(None, is_admin=True)

    def gone(image_id: str) -> bool:
        try:
            return images.get(caller, image_id).status in ("deleted", "killed")
        except ImageNotFound:
            return True
        except Exception as exc:  # unreachable, refused: not a proof that the image is gone
            LOG.warning("Image cache pass: could not look image %s up: %s", image_id, exc)
            return False

    return host.driver.manage_image_cache(gone)
