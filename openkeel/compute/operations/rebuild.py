"""rebuild_instance on the instance's host (Nova's ComputeManager.rebuild_instance, same host).

The API saved the new image, name, metadata... and task ``rebuilding``; here the guest is
destroyed and defined again from the new image: task states rebuilding ->
rebuild_block_device_mapping -> rebuild_spawning (compare-and-swap each), then ACTIVE with a
new ``launched_at``; a server that was stopped is powered off again (SHUTOFF), as Nova does.
A failure puts the server in ERROR with a fault (Nova's rebuild error handling).
"""

from __future__ import annotations

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.outcome import set_error
from openkeel.compute.operations.power import _run
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import RebuildInstance

EVENT = "compute_rebuild_instance"


def rebuild(host: ComputeHost, context: CallContext, msg: RebuildInstance) -> None:
    uuid = msg.instance_uuid

    def body(instance: Instance) -> None:
        was_stopped = instance.vm_state == VmState.STOPPED.value
        step = host.records.update
        # the API set ``rebuilding``; anything else means another operation took over
        step(uuid, InstanceUpdate(task_state=TaskState.REBUILDING.value),
             expected_task_state=TaskState.REBUILDING.value)  # fmt: skip
        ref = guest.instance_ref(host.conf, instance)
        host.driver.destroy(ref, network=guest.interfaces(instance.network_info))
        step(uuid, InstanceUpdate(task_state=TaskState.REBUILD_BLOCK_DEVICE_MAPPING.value),
             expected_task_state=TaskState.REBUILDING.value)  # fmt: skip
        instance = step(uuid, InstanceUpdate(task_state=TaskState.REBUILD_SPAWNING.value),
                        expected_task_state=TaskState.REBUILD_BLOCK_DEVICE_MAPPING.value)  # fmt: skip
        spec = guest.instance_spec(host.conf, instance)
        host.driver.spawn(spec, admin_password=msg.admin_password)
        if was_stopped:
            host.driver.power_off(spec.ref)
        step(
            uuid,
            InstanceUpdate(
                vm_state=(VmState.STOPPED if was_stopped else VmState.ACTIVE).value,
                task_state=None,
                power_state=int(host.driver.get_info(spec.ref, use_cache=False).state),
                launched_at=host.clock.now(),
            ),
            expected_task_state=TaskState.REBUILD_SPAWNING.value,
        )

    _run(host, context, uuid, EVENT, body, on_error=set_error)
