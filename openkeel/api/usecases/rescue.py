"""The rescue and unrescue server actions (Nova's compute API ``rescue`` / ``unrescue``).

rescue: a vTPM server is refused (400), then the lock (409) and the state (ACTIVE, SHUTOFF or
ERROR, no task; 409) are checked; a rescue image, when named, must be known and not a volume
snapshot (400 "Requested rescue image ... is not supported"). A volume-backed server can be
rescued only from 2.87, with a rescue image (or its own image) that has ``hw_rescue_device`` and
``hw_rescue_bus``, on a host whose provider has trait COMPUTE_RESCUE_BFV (400 otherwise).
Then task ``rescuing`` and the ``rescue`` action in one transaction, and the compute cast.
unrescue: lock, state RESCUED, task ``unrescuing``, the ``unrescue`` action, the cast.
Called by openkeel.api.resources.rescue.
"""

from __future__ import annotations

from openkeel.api.usecases.images import caller_of, image_service
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.server_actions import ServerActions
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.clients.image import ImageNotFound
from openkeel.db.repositories import instances, server_extras
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import RescueInstance, UnrescueInstance

RESCUE_BFV_TRAIT = "COMPUTE_RESCUE_BFV"
STABLE_RESCUE_PROPERTIES = ("hw_rescue_bus", "hw_rescue_device")


class UnsupportedRescueImage(Invalid):
    def __init__(self, image: str) -> None:
        super().__init__(f"Requested rescue image '{image}' is not supported")


class InstanceNotRescuable(Invalid):
    def __init__(self, uuid: str, reason: str) -> None:
        super().__init__(f"Instance {uuid} cannot be rescued: {reason}")


class OperationNotSupportedForVTPM(Invalid):
    def __init__(self, uuid: str, operation: str) -> None:
        super().__init__(
            f"Operation '{operation}' not supported for vTPM-enabled instance ({uuid})."
        )


def _instance_image_properties(inst: Instance) -> dict[str, str]:
    return {
        key.removeprefix("image_"): value
        for key, value in inst.system_metadata.items()
        if key.startswith("image_")
    }


def has_vtpm(inst: Instance) -> bool:
    """Nova's get_vtpm_constraint: a TPM version in the flavor or the server's image."""
    specs = inst.flavor.extra_specs
    props = _instance_image_properties(inst)
    return bool(specs.get("hw:tpm_version") or props.get("hw_tpm_version"))


class ServerRescuer(ServerActions):
    """rescue / unrescue for one caller."""

    def rescue(
        self,
        found: FoundServer,
        password: str,
        rescue_image_ref: str | None,
        allow_bfv_rescue: bool,
    ) -> None:
        inst = found.instance
        if has_vtpm(inst):
            raise OperationNotSupportedForVTPM(inst.uuid, "rescue")
        self._check_lock(inst)
        self._gate("rescue", inst)
        if rescue_image_ref:
            properties = self._rescue_image_properties(rescue_image_ref)
        else:
            properties = _instance_image_properties(inst)
        volume_backed = not inst.image_ref
        stable = allow_bfv_rescue and all(p in properties for p in STABLE_RESCUE_PROPERTIES)
        if volume_backed and stable:
            if RESCUE_BFV_TRAIT not in self._host_traits(found):
                reason = "Host unable to rescue a volume-backed instance"
                raise InstanceNotRescuable(inst.uuid, reason)
        elif volume_backed:
            raise InstanceNotRescuable(inst.uuid, "Cannot rescue a volume-backed instance")
        message = RescueInstance(
            inst.uuid, rescue_password=password, rescue_image_ref=rescue_image_ref
        )
        self._start(found, TaskState.RESCUING, "rescue", message)

    def unrescue(self, found: FoundServer) -> None:
        inst = found.instance
        self._check_lock(inst)
        self._gate("unrescue", inst)
        self._start(found, TaskState.UNRESCUING, "unrescue", UnrescueInstance(inst.uuid))

    # --- helpers ---------------------------------------------------------------------------

    def _rescue_image_properties(self, ref: str) -> dict[str, str]:
        try:
            image = image_service(self._services).get(caller_of(self._context), ref)
        except ImageNotFound as exc:
            raise UnsupportedRescueImage(ref) from exc
        properties = {k: str(v) for k, v in image.properties.items() if v is not None}
        # a volume snapshot image cannot be a rescue disk (as Nova)
        if properties.get("img_block_device_mapping"):
            raise UnsupportedRescueImage(ref)
        return properties

    def _host_traits(self, found: FoundServer) -> frozenset[str]:
        inst = found.instance
        placement = self._services.placement
        if placement is None or not inst.host or not inst.node:
            return frozenset()
        with self._cell(found, "rescue").connect() as conn:
            node_uuid = server_extras.compute_node_uuid(conn, inst.host, inst.node)
        return placement.get_traits(node_uuid) if node_uuid else frozenset()

    def _start(
        self,
        found: FoundServer,
        task: TaskState,
        action: str,
        message: RescueInstance | UnrescueInstance,
    ) -> None:
        uuid = found.instance.uuid
        with self._cell(found, action).begin() as conn:
            updated = instances.update(
                conn, uuid, InstanceUpdate(task_state=task.value), expected_task_state=[None]
            )
            self._start_action(conn, uuid, action)
        self._saved(found.instance, updated)
        compute = self._compute()
        if compute is not None:
            with undone_if_unsent(self._cell(found, action), uuid, action, task.value):
                compute.cast(call_context(self._context), instance_host(updated), message)


__all__ = ["ServerRescuer", "has_vtpm"]
