"""rescue_instance, unrescue_instance and the ``rescue_timeout`` periodic task (Nova's
ComputeManager.rescue_instance, unrescue_instance and _poll_rescued_instances).

The API set task ``rescuing`` / ``unrescuing`` and recorded the action before casting. Rescue:
the guest is powered off (cleanly when asked) and booted from the rescue image with its own
disks attached; the server ends RESCUED with the guest's power state and a new ``launched_at``
(which the rescue timeout counts from). A driver failure puts it in ERROR with the fault
"Instance <id> cannot be rescued: Driver Error: <reason>". Unrescue boots the guest's own
disks again and ends ACTIVE; a driver that lacks the feature leaves it ACTIVE with a fault,
any other failure puts it in ERROR (Nova's ``_error_out_instance_on_exception``).
"""

from __future__ import annotations

import datetime
import logging
import secrets
import uuid as uuidlib

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.build import power_state_of
from openkeel.compute.operations.outcome import GONE, revert_task_state, set_error
from openkeel.compute.operations.power import _run
from openkeel.domain.errors import ComputeError
from openkeel.domain.instances import Instance, InstanceUpdate, InstanceUpdateConflict
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import RescueInstance
from openkeel.virt.errors import NotSupported
from openkeel.virt.model import ImageSpec

LOG = logging.getLogger(__name__)
IMAGE_PREFIX = "image_"
# Nova's generate_password alphabet (no look-alike characters).
_PASSWORD_CHARS = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class InstanceNotRescuable(ComputeError):
    """Nova's InstanceNotRescuable, the fault of a rescue the driver could not do."""

    def __init__(self, uuid: str, reason: str) -> None:
        super().__init__(f"Instance {uuid} cannot be rescued: {reason}")


def rescue_image(instance: Instance, rescue_image_ref: str | None) -> ImageSpec:
    """The image to boot: the one asked for, else the image the server's image was made from
    (``image_base_image_ref``), else the server's own image (Nova's ``_get_rescue_image``).
    The server's own image comes with the properties saved at boot."""
    sysmeta = instance.system_metadata
    ref = rescue_image_ref or sysmeta.get("image_base_image_ref") or instance.image_ref or ""
    properties: dict[str, str] = {}
    if ref == instance.image_ref:
        properties = {
            key[len(IMAGE_PREFIX) :]: value
            for key, value in sysmeta.items()
            if key.startswith(IMAGE_PREFIX)
        }
    return ImageSpec(image_id=ref, properties=properties)


def rescue(host: ComputeHost, context: CallContext, msg: RescueInstance) -> None:
    """Boot the guest from the rescue image; RESCUED."""
    uuid = msg.instance_uuid

    def body(instance: Instance) -> None:
        password = msg.rescue_password or "".join(
            secrets.choice(_PASSWORD_CHARS) for _ in range(int(host.conf.password_length))
        )
        spec = guest.instance_spec(host.conf, instance)
        image = rescue_image(instance, msg.rescue_image_ref)
        try:
            timeout = host.conf.shutdown_timeout if msg.clean_shutdown else 0
            retry = host.conf.compute.shutdown_retry_interval if msg.clean_shutdown else 0
            host.driver.power_off(spec.ref, timeout, retry)
            host.driver.rescue(spec, image, password)
        except Exception as exc:
            LOG.exception("Error trying to rescue instance %s", uuid)
            raise InstanceNotRescuable(uuid, f"Driver Error: {exc}") from exc
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.RESCUED.value,
                task_state=None,
                power_state=int(power_state_of(host, instance)),
                launched_at=host.clock.now(),
            ),
            expected_task_state=TaskState.RESCUING.value,
        )

    _run(host, context, uuid, "compute_rescue_instance", body, _error_unless_preempted,
         notify_extra={"rescue_image_ref": msg.rescue_image_ref})  # fmt: skip


def _error_unless_preempted(host: ComputeHost, uuid: str, exc: BaseException) -> None:
    """ERROR with the fault, unless another operation took the task over meanwhile (the final
    compare-and-swap lost): then only the fault, as Nova's preempted task."""
    if isinstance(exc, InstanceUpdateConflict):
        LOG.info("Rescue state of %s not saved, the task was taken over: %s", uuid, exc)
        host.records.add_fault(uuid, exc, host.host)
        return
    set_error(host, uuid, exc)


def unrescue(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Boot the guest from its own disks again; ACTIVE."""

    def body(instance: Instance) -> None:
        host.driver.unrescue(guest.instance_ref(host.conf, instance))
        host.records.update(
            uuid,
            InstanceUpdate(
                vm_state=VmState.ACTIVE.value,
                task_state=None,
                power_state=int(power_state_of(host, instance)),
            ),
            expected_task_state=TaskState.UNRESCUING.value,
        )

    def on_error(host: ComputeHost, uuid: str, exc: BaseException) -> None:
        if isinstance(exc, NotSupported):
            revert_task_state(host, uuid, exc)
            host.records.apply(uuid, InstanceUpdate(vm_state=VmState.ACTIVE.value))
        else:
            _error_unless_preempted(host, uuid, exc)

    _run(host, context, uuid, "compute_unrescue_instance", body, on_error)


def poll_rescued_instances(host: ComputeHost) -> list[str]:
    """``rescue_timeout`` > 0: unrescue this host's servers rescued longer ago than that.

    As Nova's periodic task calls the compute API's unrescue: task ``unrescuing`` (only from
    an idle task) and an ``unrescue`` action under a request id of its own, then unrescue.
    Returns the uuids it unrescued.
    """
    timeout = int(host.conf.rescue_timeout)
    if timeout <= 0:
        return []
    cutoff = host.clock.now() - datetime.timedelta(seconds=timeout)
    done = []
    for instance in host.records.on_host(host.host):
        if instance.vm_state != VmState.RESCUED or instance.launched_at is None:
            continue
        if instance.launched_at >= cutoff:
            continue
        context = CallContext(roles=("admin",), request_id=f"req-{uuidlib.uuid4()}")
        try:
            host.records.apply(
                instance.uuid,
                InstanceUpdate(task_state=TaskState.UNRESCUING.value),
                expected_task_state=[None],
                expected_vm_state=[VmState.RESCUED.value],
            )
        except GONE:
            continue
        except ComputeError as exc:  # busy with another task meanwhile: next time
            LOG.info("Rescued instance %s not unrescued now: %s", instance.uuid, exc)
            continue
        host.records.ensure_action(instance.uuid, "unrescue", context.request_id, None, None)
        LOG.info("Unrescuing %s: rescued for more than %s seconds", instance.uuid, timeout)
        unrescue(host, context, instance.uuid)
        done.append(instance.uuid)
    return done
