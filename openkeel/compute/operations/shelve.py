"""shelve_instance, shelve_offload_instance, unshelve_instance and the offload periodic task
(Nova's ComputeManager shelve family).

Shelve: task ``shelving`` (set by the API), the guest is powered off, its root disk copied
into the image the API registered (task ``shelving_image_pending_upload`` ->
``shelving_image_uploading``), then vm_state SHELVED with ``shelved_at``, ``shelved_image_id``
and ``shelved_host`` in the system metadata. With ``shelved_offload_time`` 0 it is offloaded at
once (task ``shelving_offloading``). A failure deletes the image, clears the task and records a
fault (the server keeps its vm_state).
Offload: the guest is destroyed, the instance leaves the host (host and node cleared), its
Placement allocations are deleted, vm_state SHELVED_OFFLOADED.
Unshelve (of an offloaded server, scheduled by the conductor): the guest is spawned on this
host from the shelved image, ACTIVE; the shelved image and the shelved_* keys are removed. A
failure leaves the server SHELVED_OFFLOADED with a fault and frees the allocation the
scheduler claimed here (Nova's unshelve failure handling).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging

from openkeel.compute import config_drive, guest, security_groups
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import volume_moves
from openkeel.compute.operations.outcome import (
    bind_ports,
    forget_shelved_image,
    free_allocations,
    revert_task_state,
)
from openkeel.compute.operations.power import _run
from openkeel.compute.operations.snapshot import copy_and_upload, failed_with_image
from openkeel.compute.vif_plugging import plugging_vifs
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import PowerState, TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import ShelveInstance, ShelveOffloadInstance, UnshelveInstance
from openkeel.virt.model import ImageSpec

LOG = logging.getLogger(__name__)

_SHELVING_NAMES = {
    TaskState.IMAGE_PENDING_UPLOAD: TaskState.SHELVING_IMAGE_PENDING_UPLOAD,
    TaskState.IMAGE_UPLOADING: TaskState.SHELVING_IMAGE_UPLOADING,
}


def _power_off(host: ComputeHost, instance: Instance, clean_shutdown: bool) -> None:
    ref = guest.instance_ref(host.conf, instance)
    if host.driver.get_info(ref, use_cache=False).state == PowerState.SHUTDOWN:
        return
    timeout = host.conf.shutdown_timeout if clean_shutdown else 0
    retry = host.conf.compute.shutdown_retry_interval if clean_shutdown else 0
    host.driver.power_off(ref, timeout, retry)


def shelve(host: ComputeHost, context: CallContext, msg: ShelveInstance) -> None:
    """shelve on this host (an image-backed server)."""
    uuid = msg.instance_uuid

    def body(instance: Instance) -> None:
        _power_off(host, instance, msg.clean_shutdown)
        if not copy_and_upload(host, context, instance, msg.image_id, TaskState.SHELVING, _SHELVING_NAMES):  # fmt: skip
            return
        offload_now = host.conf.shelved_offload_time == 0
        sysmeta = {
            **instance.system_metadata,
            "shelved_at": host.clock.now().isoformat(),
            "shelved_image_id": msg.image_id,
            "shelved_host": host.host,
        }
        ref = guest.instance_ref(host.conf, instance)
        updated = host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.SHELVED.value,
                task_state=TaskState.SHELVING_OFFLOADING.value if offload_now else None,
                power_state=int(host.driver.get_info(ref, use_cache=False).state),
                system_metadata=sysmeta,
            ),
            expected_task_state=(TaskState.SHELVING.value, TaskState.SHELVING_IMAGE_UPLOADING.value),
        )  # fmt: skip
        if offload_now:
            _offload(host, context, updated, clean_shutdown=False)

    _run(host, context, uuid, "compute_shelve_instance", body, failed_with_image(host, context, msg.image_id))  # fmt: skip


def shelve_offload(host: ComputeHost, context: CallContext, msg: ShelveOffloadInstance) -> None:
    """shelveOffload (or the shelve of a volume-backed server) on this host."""

    def body(instance: Instance) -> None:
        _offload(host, context, instance, msg.clean_shutdown)

    _run(host, context, msg.instance_uuid, "compute_shelve_offload_instance", body)


def _offload(
    host: ComputeHost, context: CallContext, instance: Instance, clean_shutdown: bool
) -> None:
    uuid = instance.uuid
    host.records.update(
        uuid,
        InstanceUpdate(task_state=TaskState.SHELVING_OFFLOADING.value),
        expected_task_state=(TaskState.SHELVING.value, TaskState.SHELVING_OFFLOADING.value),
    )
    _power_off(host, instance, clean_shutdown)
    ref = guest.instance_ref(host.conf, instance)
    host.driver.destroy(ref, network=guest.interfaces(instance.network_info))
    # the volumes stay reserved for the server, connected to no host (Nova's
    # _terminate_volume_connections)
    volume_moves.reserve_anew(host, context, uuid)
    # an offloaded server holds nothing on any host; freed before the state says offloaded,
    # so whoever sees SHELVED_OFFLOADED sees no allocation
    free_allocations(host, uuid)
    bind_ports(host, uuid, instance.project_id, here=False)
    host.records.update(
        uuid,
        InstanceUpdate(
            vm_state=VmState.SHELVED_OFFLOADED.value,
            task_state=None,
            power_state=int(PowerState.SHUTDOWN),
            host=None,
            node=None,
        ),
        expected_task_state=TaskState.SHELVING_OFFLOADING.value,
    )


def unshelve(host: ComputeHost, context: CallContext, msg: UnshelveInstance) -> None:
    """Spawn an offloaded server on this host from its shelved image."""
    uuid = msg.instance_uuid

    def body(instance: Instance) -> None:
        step = host.records.update
        instance = step(uuid, InstanceUpdate(task_state=TaskState.SPAWNING.value, host=host.host,
                                             node=msg.node, launched_on=host.host),
                        expected_task_state=TaskState.UNSHELVING.value)  # fmt: skip
        instance = bind_ports(host, uuid, instance.project_id)
        # the volumes connected to this host (Nova's _prep_block_device)
        devices = volume_moves.connect_here(host, context, uuid)
        volume_moves.complete(host, context, uuid)
        spec = dataclasses.replace(guest.instance_spec(host.conf, instance), block_devices=devices)
        if msg.image_id and spec.image is not None:
            # spawn from the shelved image; the server keeps its original image_ref (Nova)
            spec = dataclasses.replace(spec, image=ImageSpec(image_id=msg.image_id))
        security_groups.refresh(host, instance, instance.network_info)  # decision 0077
        with plugging_vifs(host, uuid, instance.network_info):
            host.driver.spawn(config_drive.attach(host.conf, instance, spec))
        sysmeta = forget_shelved_image(host, context, dict(instance.system_metadata))
        step(
            uuid,
            InstanceUpdate(
                vm_state=VmState.ACTIVE.value,
                task_state=None,
                power_state=int(host.driver.get_info(spec.ref, use_cache=False).state),
                system_metadata=sysmeta,
            ),
            expected_task_state=TaskState.SPAWNING.value,
        )

    def on_error(host_: ComputeHost, uuid_: str, exc: BaseException) -> None:
        # back to offloaded: no host, no allocation, ports unbound (Nova's unshelve failure)
        try:
            failed = host.records.get(uuid_)
            host.driver.destroy(guest.instance_ref(host.conf, failed))
            bind_ports(host, uuid_, failed.project_id, here=False)
        except Exception:
            LOG.exception("Could not remove the guest of the failed unshelve of %s", uuid_)
        free_allocations(host, uuid_)
        try:  # the volumes reserved again, connected to no host
            volume_moves.reserve_anew(host, context, uuid_)
        except Exception:
            LOG.exception("Could not end the volume connections of %s", uuid_)
        host.records.update(uuid_, InstanceUpdate(host=None, node=None))
        revert_task_state(host_, uuid_, exc)  # the task cleared last: then all is settled

    _run(host, context, uuid, "compute_unshelve_instance", body, on_error)


def offload_shelved_instances(host: ComputeHost) -> list[str]:
    """Periodic: offload servers shelved on this host longer than ``shelved_offload_time``."""
    wait = host.conf.shelved_offload_time
    if wait <= 0:
        return []
    cutoff = host.clock.now() - datetime.timedelta(seconds=wait)
    done = []
    context = CallContext(roles=("admin",))
    for instance in host.records.on_host(host.host):
        if instance.vm_state != VmState.SHELVED or instance.task_state is not None:
            continue
        shelved_at = instance.system_metadata.get("shelved_at")
        if not shelved_at or datetime.datetime.fromisoformat(shelved_at) > cutoff:
            continue
        try:
            host.records.update(
                instance.uuid,
                InstanceUpdate(task_state=TaskState.SHELVING_OFFLOADING.value),
                expected_task_state=None,
            )
        except ComputeError:
            continue  # an operation took it meanwhile (or it is gone)
        shelve_offload(host, context, ShelveOffloadInstance(instance.uuid, clean_shutdown=False))
        done.append(instance.uuid)
    return done


__all__ = ["offload_shelved_instances", "shelve", "shelve_offload", "unshelve"]
