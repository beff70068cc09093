"""build_and_run_instance: networks, spawn, ACTIVE — or reschedule, or ERROR with a fault.

Flow (Nova's _do_build_and_run_instance): per-instance lock; action event
``compute__do_build_and_run_instance``; vm_state building with expected task state
(scheduling, None); task states networking → block_device_mapping → spawning, each a
compare-and-swap on the previous one; driver.spawn (with the config drive's files when the
server has one or ``force_config_drive``: compute/config_drive.py), waiting for
``network-vif-plugged`` of ports not yet active (compute/vif_plugging.py);
ACTIVE/RUNNING/launched_at. On a failure
the guest and the networks are cleaned up, then the instance is rescheduled through conductor
``build_instances`` (when the request has retry information) after freeing this host's
allocation, else set to ERROR with a fault and its allocations deleted. If the instance was
deleted meanwhile (not found, or task state ``deleting``) the build just cleans up and stops.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from openkeel import metrics
from openkeel.compute import config_drive, guest, notifying, port_resources, security_groups
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import boot_volumes
from openkeel.compute.operations.outcome import GONE, free_allocations, set_error
from openkeel.compute.vif_plugging import VirtualInterfaceCreateFailed, plugging_vifs
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import (
    Instance,
    InstanceNotFound,
    InstanceUpdate,
    InstanceUpdateConflict,
)
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.network.adapter import parse_requested
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from openkeel.rpc.messages.conductor import BuildInstances

LOG = logging.getLogger(__name__)

EVENT = "compute__do_build_and_run_instance"


def build_and_run(host: ComputeHost, context: CallContext, args: BuildAndRunInstance) -> None:
    """Build one instance on this host; never raises, never leaves it in BUILD."""
    uuid = args.instance_uuid
    with host.locks.hold(uuid):
        host.records.event_start(uuid, context.request_id, EVENT, host.host)
        notifying.started(host, context, uuid, EVENT)
        failure: BaseException | None = None
        outcome = "active"
        try:
            _build(host, context, args)
        except GONE as exc:
            LOG.info("Instance %s was deleted during its build", uuid)
            _cleanup(host, context, uuid)
            failure, outcome = exc, "deleted"
        except InstanceUpdateConflict as exc:
            LOG.warning("Build of %s lost a state race: %s", uuid, exc)
            _cleanup(host, context, uuid)
            failure, outcome = exc, "conflict"
        except Exception as exc:
            LOG.exception("Build of instance %s failed", uuid)
            failure, outcome = exc, "failed"
            if _cleanup(host, context, uuid):
                _after_failure(host, context, args, exc)
            else:
                outcome = "aborted"
                _abort(host, context, uuid, exc)
        metrics.count_build(outcome)
        notifying.finished(host, context, uuid, EVENT, failure)
        host.records.event_finish(uuid, context.request_id, EVENT, failure)


def _step(host: ComputeHost, uuid: str, task: TaskState | None, expected: Any) -> Instance:
    return host.records.update(
        uuid, InstanceUpdate(task_state=task.value if task else None), expected_task_state=expected
    )


def _build(host: ComputeHost, context: CallContext, args: BuildAndRunInstance) -> None:
    uuid = args.instance_uuid
    # A build settled meanwhile (ERROR after a restart, or by the conductor's orphan sweep)
    # is never revived by a cast that arrives late.
    host.records.apply(
        uuid,
        InstanceUpdate(vm_state=VmState.BUILDING.value, task_state=None),
        expected_task_state=(TaskState.SCHEDULING.value, None),
        expected_vm_state=VmState.BUILDING.value,
    )
    instance = _step(host, uuid, TaskState.NETWORKING, None)
    ref = host.net_ref(
        uuid,
        instance.project_id,
        tuple(instance.security_groups),
        port_resources.from_spec(args.request_spec),
    )
    network_info = host.network.allocate_for_instance(ref, parse_requested(args.requested_networks))
    # The network info is saved with the next state change (as Nova saves what the network
    # allocation changed with its block_device_mapping/spawning save): one write less.
    host.records.apply(
        uuid,
        InstanceUpdate(task_state=TaskState.BLOCK_DEVICE_MAPPING.value, network_info=network_info),
        expected_task_state=TaskState.NETWORKING.value,
    )
    devices = boot_volumes.prepare(host, context, uuid)
    instance = _step(host, uuid, TaskState.SPAWNING, TaskState.BLOCK_DEVICE_MAPPING.value)
    spec = replace(guest.instance_spec(host.conf, instance, network_info), block_devices=devices)
    if config_drive.required(host.conf, instance) and not instance.config_drive:
        # forced (option or image): the server shows it has one, as Nova records it
        host.records.update(uuid, InstanceUpdate(config_drive="True"))
    spec = config_drive.attach(host.conf, instance, spec, network_info)
    # Before the guest runs, as Neutron filters a port from its binding (decision 0077).
    security_groups.refresh(host, instance, network_info)
    with plugging_vifs(host, uuid, network_info):
        host.driver.spawn(spec, admin_password=args.admin_password)
    state = host.driver.get_info(spec.ref, use_cache=False).state
    host.records.apply(
        uuid,
        InstanceUpdate(
            vm_state=VmState.ACTIVE.value,
            task_state=None,
            power_state=int(state),
            launched_at=host.clock.now(),
        ),
        expected_task_state=TaskState.SPAWNING.value,
    )


def _cleanup(host: ComputeHost, context: CallContext, uuid: str) -> bool:
    """Remove what a failed build may have left: the guest, the volume attachments (the
    volumes stay mapped: a reschedule attaches them again, a delete releases them) and the
    network allocation. False when the guest could not be destroyed (it may still be
    there)."""
    try:
        instance = host.records.get(uuid, read_deleted="yes")
    except InstanceNotFound:
        return True
    destroyed = True
    try:
        host.driver.destroy(guest.instance_ref(host.conf, instance))
    except Exception:
        LOG.exception("Could not destroy the guest of failed build %s", uuid)
        destroyed = False
    boot_volumes.detach_all(host, context, uuid)
    try:
        host.network.deallocate_for_instance(host.net_ref(uuid, instance.project_id))
        if not instance.deleted:
            host.records.update(uuid, InstanceUpdate(network_info=[]))
    except Exception:
        LOG.exception("Could not deallocate the networks of failed build %s", uuid)
    return destroyed


def _abort(host: ComputeHost, context: CallContext, uuid: str, exc: BaseException) -> None:
    """A failed build whose guest could not be cleaned up is not rescheduled (Nova's
    BuildAbortException): another host would build a second guest while this one may still
    run. The server goes to ERROR and, unlike Nova, keeps this host and its allocation, so
    that deleting it reaches this host's driver, which removes what is left."""
    LOG.error("Build of %s failed and its guest could not be cleaned up: not rescheduled", uuid)
    boot_volumes.discard(host, context, uuid)
    set_error(host, uuid, BuildAborted(uuid, exc))


class BuildAborted(ComputeError):
    """Fault of a build that failed and could not be cleaned up."""

    def __init__(self, uuid: str, cause: BaseException) -> None:
        super().__init__(
            f"Build of instance {uuid} aborted: {cause}; the guest could not be cleaned up"
        )


class NetworkBuildAborted(ComputeError):
    """Fault of a build whose networks failed in a way Nova does not reschedule."""

    def __init__(self, uuid: str) -> None:
        super().__init__(
            f"Build of instance {uuid} aborted: Failed to allocate the network(s), not rescheduling."
        )


def _after_failure(
    host: ComputeHost, context: CallContext, args: BuildAndRunInstance, exc: BaseException
) -> None:
    """Reschedule when the request allows retries, else ERROR + fault + no allocations.
    VIFs that were never reported plugged (fatal) are not rescheduled, as in Nova."""
    retry = args.filter_properties.get("retry")
    if isinstance(exc, VirtualInterfaceCreateFailed):
        exc = NetworkBuildAborted(args.instance_uuid)
    elif isinstance(exc, boot_volumes.BlockDevicePrepFailed):
        pass  # as Nova: a build whose volumes failed is not rescheduled
    elif isinstance(retry, Mapping) and _reschedule(host, context, args, retry, exc):
        return
    boot_volumes.discard(host, context, args.instance_uuid)
    set_error(host, args.instance_uuid, exc)
    free_allocations(host, args.instance_uuid)


def _reschedule(
    host: ComputeHost,
    context: CallContext,
    args: BuildAndRunInstance,
    retry: Mapping[str, Any],
    exc: BaseException,
) -> bool:
    uuid = args.instance_uuid
    try:
        instance = host.records.update(
            uuid,
            InstanceUpdate(task_state=TaskState.SCHEDULING.value, host=None, node=None),
            expected_vm_state=VmState.BUILDING.value,
        )
    except Exception:
        LOG.exception("Could not prepare %s for rescheduling", uuid)
        return False
    free_allocations(host, uuid)
    hosts = [*retry.get("hosts", []), [host.host, args.node]]
    filter_properties = {
        **args.filter_properties,
        "retry": {**retry, "hosts": hosts, "exc_reason": f"{type(exc).__name__}: {exc}"},
    }
    host.conductor.cast(
        context,
        BuildInstances(
            instance_uuids=(instance.uuid,),
            image=args.image,
            filter_properties=filter_properties,
            admin_password=args.admin_password,
            requested_networks=args.requested_networks,
            request_spec=args.request_spec,
            host_lists=(args.host_list,),
        ),
    )
    LOG.info("Build of %s on %s failed; rescheduled", uuid, host.host)
    return True


def power_state_of(host: ComputeHost, instance: Instance) -> PowerState:
    """The driver's power state of the guest (NOSTATE when it does not exist)."""
    from openkeel.virt.errors import InstanceNotFound as GuestNotFound

    try:
        return host.driver.get_info(guest.instance_ref(host.conf, instance), use_cache=False).state
    except GuestNotFound:
        return PowerState.NOSTATE
