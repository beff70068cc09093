"""rebuild_instance (Nova's ComputeManager.rebuild_instance): a rebuild on this host, or an
evacuation (``recreate``) to this host from a dead one.

The API saved the new image, name, metadata... and task ``rebuilding``. Rebuild: the guest is
destroyed and defined again from the image; a volume-backed server at 2.93 has its root volume
reimaged first (operations/reimage.py). Evacuation: the instance moves to this host and
node (migration ``pre-migrating`` -> ``done``) and its guest is defined here; the source's
guest is removed when that host comes back (compute/evacuated.py). Both go through the task
states rebuilding -> rebuild_block_device_mapping -> rebuild_spawning (compare-and-swap each)
and end ACTIVE with a new ``launched_at``; a server that was stopped (or, from 2.95, any
evacuated server) ends SHUTOFF. A failure puts the server in ERROR with a fault (the
evacuation's migration ``failed``), as Nova.
"""

from __future__ import annotations

from dataclasses import replace

from openkeel.compute import config_drive, guest, notifying, security_groups
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import boot_volumes, reimage, volume_moves
from openkeel.compute.operations.outcome import bind_ports, set_error
from openkeel.compute.operations.power import _run
from openkeel.compute.vif_plugging import plugging_vifs
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as mstatus
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import RebuildInstance
from openkeel.virt.model import BlockDevice

EVENT = "compute_rebuild_instance"


def rebuild(host: ComputeHost, context: CallContext, msg: RebuildInstance) -> None:
    uuid = msg.instance_uuid

    def body(instance: Instance) -> None:
        stop_after = instance.vm_state == VmState.STOPPED.value or msg.target_state == "stopped"
        step = host.records.update
        if msg.recreate:
            # The instance is this host's from now on (its old host is down).
            instance = step(uuid, InstanceUpdate(host=host.host, node=msg.node, launched_on=host.host),
                            expected_task_state=TaskState.REBUILDING.value)  # fmt: skip
            bind_ports(host, uuid, instance.project_id)
            notifying.evacuated(host, context, instance)
        else:
            # the API set ``rebuilding``; anything else means another operation took over
            step(uuid, InstanceUpdate(task_state=TaskState.REBUILDING.value),
                 expected_task_state=TaskState.REBUILDING.value)  # fmt: skip
            ref = guest.instance_ref(host.conf, instance)
            host.driver.destroy(ref, network=guest.interfaces(instance.network_info))
            if msg.reimage_boot_volume:  # 2.93: the root volume takes the image
                reimage.reimage_root(host, context, uuid, msg.image_ref)
        step(uuid, InstanceUpdate(task_state=TaskState.REBUILD_BLOCK_DEVICE_MAPPING.value),
             expected_task_state=TaskState.REBUILDING.value)  # fmt: skip
        if msg.reimage_boot_volume and not msg.recreate:
            reimage.attach_root(host, context, uuid)
        instance = step(uuid, InstanceUpdate(task_state=TaskState.REBUILD_SPAWNING.value),
                        expected_task_state=TaskState.REBUILD_BLOCK_DEVICE_MAPPING.value)  # fmt: skip
        # The guest is defined again with the volumes it has (a volume root stays its root);
        # an evacuated one's are attached to this host instead of the lost one.
        devices = (
            _evacuated_volumes(host, context, uuid)
            if msg.recreate
            else boot_volumes.attached(host, uuid)
        )
        spec = replace(guest.instance_spec(host.conf, instance), block_devices=devices)
        spec = config_drive.attach(host.conf, instance, spec)
        # The destroy above removed what a driver enforcing the groups wrote (decision 0077).
        security_groups.refresh(host, instance, instance.network_info)
        # An evacuation onto shared storage (one KubeVirt cluster) takes the guest over.
        if not (msg.recreate and host.driver.take_over(spec)):
            with plugging_vifs(host, uuid, instance.network_info):
                host.driver.spawn(spec, admin_password=msg.admin_password)
        if stop_after:
            host.driver.power_off(spec.ref)
        step(
            uuid,
            InstanceUpdate(
                vm_state=(VmState.STOPPED if stop_after else VmState.ACTIVE).value,
                task_state=None,
                power_state=int(host.driver.get_info(spec.ref, use_cache=False).state),
                launched_at=host.clock.now(),
            ),
            expected_task_state=TaskState.REBUILD_SPAWNING.value,
        )
        _migration_status(host, msg, mstatus.DONE)

    def on_error(host: ComputeHost, uuid: str, exc: BaseException) -> None:
        set_error(host, uuid, exc)
        _migration_status(host, msg, mstatus.FAILED)

    _run(host, context, uuid, EVENT, body, on_error=on_error)


def _evacuated_volumes(
    host: ComputeHost, context: CallContext, uuid: str
) -> tuple[BlockDevice, ...]:
    """Nova's evacuation: each attachment replaced by a reserved one (the lost host's deleted),
    then given this host's connector and completed."""
    volume_moves.reserve_anew(host, context, uuid)
    devices = volume_moves.connect_here(host, context, uuid)
    volume_moves.complete(host, context, uuid)
    return devices


def _migration_status(host: ComputeHost, msg: RebuildInstance, status: str) -> None:
    if msg.migration is not None:
        with host.records.db.begin() as conn:
            migrations.update(conn, int(msg.migration["id"]), status=status)
