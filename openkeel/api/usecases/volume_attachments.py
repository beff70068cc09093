"""A server's volumes (``/servers/{server_id}/os-volume_attachments``): its volume mappings
(cell DB ``block_device_mapping``) and Cinder's attachments through the volume adapter.

Attach, in Nova's order: the server (404), the policy, the lock (409), the state gate (409),
the volume (404), already attached to this server or (not multiattach) to another one (400),
a tag or a multiattach volume for a shelved-offloaded server (400), the device count (403), a
multiattach volume below 2.60 (400), then Cinder's attachment (its refusal: 400); the mapping
is written and compute attaches it (a cast: the volume is ``reserved`` until the host has it
in use). A shelved-offloaded server has no host: the mapping and the attachment are made and
the host attaches them when it is unshelved. Detach: the server, the policy, the volume
(404), its mapping on this server (404), not the root disk (400), the lock and state (409),
then Cinder marks it detaching (400 when it is not in use) and compute detaches it (cast).
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.api.usecases.volume_zones import check_attach
from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices, instance_actions
from openkeel.db.repositories.block_devices import VolumeMapping as VolumeMapping
from openkeel.domain.errors import Conflict, Forbidden, Invalid, NotFound, ServiceUnavailable
from openkeel.domain.instances import Instance
from openkeel.domain.states import VmState, ensure_action_allowed
from openkeel.rpc.messages.compute import AttachVolume, DetachVolume
from openkeel.volume.adapter import VolumeContext, VolumeInfo
from openkeel.volume.factory import get_volume_adapter

POLICY = "os_compute_api:os-volumes-attachments:%s"


@dataclass(frozen=True)
class AttachRequest:
    volume_id: str
    device: str | None = None
    tag: str | None = None
    delete_on_termination: bool = False
    multiattach_allowed: bool = False  # 2.60


def next_device(taken: set[str]) -> str:
    """The first free ``/dev/vdX`` after the root disk (Nova's libvirt names them so)."""
    names = {name.rsplit("/", 1)[-1] for name in taken} | {"vda"}
    for letter in "bcdefghijklmnopqrstuvwxyz":
        if f"vd{letter}" not in names:
            return f"/dev/vd{letter}"
    raise Forbidden("The maximum allowed number of disk devices (26) to attach to a single "
                    "instance has been exceeded.")  # fmt: skip


def _check_not_attached(mappings: list[VolumeMapping], inst: Instance, volume: VolumeInfo) -> None:
    """Nova's _check_volume_already_attached: a volume that is not multiattach has no mapping
    on any server of the cell (Cinder would refuse too, unless an admin reset its status); a
    multiattach volume none on this server."""
    if not mappings:
        return
    if not volume.multiattach:
        servers = " ".join(m.instance_uuid for m in mappings)
        raise Invalid(f"Invalid volume: volume {volume.id} is already attached to instances: "
                      f"{servers}")  # fmt: skip
    if any(m.instance_uuid == inst.uuid for m in mappings):
        raise Invalid(f"Invalid volume: volume {volume.id} already attached")


class ServerVolumes:
    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._volumes = get_volume_adapter(services.conf, services.api_db)
        self._volume_context = VolumeContext(context.project_id, context.user_id,
                                             context.is_admin, context.auth_token)  # fmt: skip

    def _server(self, server_id: str, rule: str) -> FoundServer:
        found = find_server(self._services, self._context, server_id)
        self._context.can(POLICY % rule, {"project_id": found.instance.project_id})
        if found.cell_uuid is None:
            raise Conflict(f"Instance {server_id} is not ready")
        return found

    def _cell(self, found: FoundServer) -> str:
        assert found.cell_uuid is not None
        return found.cell_uuid

    def list(self, server_id: str) -> list[VolumeMapping]:
        found = self._server(server_id, "index")
        db = self._services.cell_dbs[self._cell(found)]
        with reader(db).connect() as conn:
            return block_devices.volumes_of(conn, found.instance.uuid)

    def show(self, server_id: str, volume_id: str) -> VolumeMapping:
        found = self._server(server_id, "show")
        return self._mapping(found, server_id, volume_id)

    def _mapping(self, found: FoundServer, server_id: str, volume_id: str) -> VolumeMapping:
        db = self._services.cell_dbs[self._cell(found)]
        with reader(db).connect() as conn:
            mapping = block_devices.find(conn, found.instance.uuid, volume_id)
        if mapping is None:
            raise NotFound(f"Instance {server_id} is not attached to volume {volume_id}")
        return mapping

    def _ready(self, inst: Instance, operation: str) -> None:
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        ensure_action_allowed(operation, server_id=inst.uuid, vm_state=inst.vm_state,
                              task_state=inst.task_state, launched=inst.launched_at is not None)  # fmt: skip
        offloaded = inst.vm_state == VmState.SHELVED_OFFLOADED.value
        if not offloaded and not inst.host:
            raise Conflict(f"Instance {inst.uuid} is not ready")
        if not offloaded and self._services.compute is None:
            raise ServiceUnavailable("No compute service can be reached from this API process.")

    def _record(self, found: FoundServer, action: str) -> None:
        with self._services.cell_dbs[self._cell(found)].begin() as conn:
            instance_actions.start_action(
                conn, found.instance.uuid, action, request_id=self._context.request_id,
                user_id=self._context.user_id, project_id=self._context.project_id,
            )  # fmt: skip

    def attach(self, server_id: str, wanted: AttachRequest) -> VolumeMapping:
        found = self._server(server_id, "create")
        inst = found.instance
        self._ready(inst, "attach_volume")
        volume = self._volumes.get(self._volume_context, wanted.volume_id)
        check_attach(self._services, inst, volume)
        offloaded = inst.vm_state == VmState.SHELVED_OFFLOADED.value
        if offloaded and wanted.tag:
            raise Invalid("Tagged volume attachment is not supported for shelved-offloaded "
                          "instances.")  # fmt: skip
        db = self._services.cell_dbs[self._cell(found)]
        with db.connect() as conn:
            _check_not_attached(block_devices.of_volume(conn, volume.id), inst, volume)
            taken = block_devices.device_names(conn, inst.uuid)
        if offloaded and volume.multiattach:
            raise Invalid("Attaching multiattach volumes is not supported for shelved-offloaded "
                          "instances.")  # fmt: skip
        limit = self._services.conf.compute.max_disk_devices_to_attach
        if limit >= 0 and len(taken | {"/dev/vda"}) >= limit:
            raise Forbidden(f"The maximum allowed number of disk devices ({limit}) to attach to "
                            "a single instance has been exceeded.")  # fmt: skip
        if volume.multiattach and not wanted.multiattach_allowed:
            raise Invalid("Multiattach volumes are only supported starting with compute API "
                          "version 2.60.")  # fmt: skip
        attachment_id = self._volumes.attachment_create(self._volume_context, volume.id, inst.uuid)
        try:
            with db.begin() as conn:
                mapping = block_devices.add_volume(
                    conn, inst.uuid, volume.id, next_device(taken), tag=wanted.tag,
                    delete_on_termination=wanted.delete_on_termination,
                    attachment_id=attachment_id,
                )  # fmt: skip
        except BaseException:
            self._volumes.attachment_delete(self._volume_context, attachment_id)
            raise
        self._record(found, "attach_volume")
        if offloaded:
            # No host to connect it: Nova completes the attachment without a connector, so
            # the volume is in-use by the server until the unshelve connects it.
            self._volumes.attachment_complete(self._volume_context, attachment_id)
        else:
            assert self._services.compute is not None and inst.host
            message = AttachVolume(inst.uuid, bdm_uuid=mapping.uuid)
            self._services.compute.cast(call_context(self._context), inst.host, message)
        return mapping

    def detach(self, server_id: str, volume_id: str) -> None:
        found = self._server(server_id, "delete")
        inst = found.instance
        self._volumes.get(self._volume_context, volume_id)
        mapping = self._mapping(found, server_id, volume_id)
        if mapping.is_root:
            raise Invalid("Cannot detach a root device volume")
        self._ready(inst, "detach_volume")
        self._record(found, "detach_volume")
        if inst.vm_state == VmState.SHELVED_OFFLOADED.value:
            if mapping.attachment_id:
                self._volumes.attachment_delete(self._volume_context, mapping.attachment_id)
            with self._services.cell_dbs[self._cell(found)].begin() as conn:
                block_devices.remove(conn, mapping.uuid)
            return
        self._volumes.begin_detaching(self._volume_context, volume_id)
        assert self._services.compute is not None and inst.host
        message = DetachVolume(inst.uuid, volume_id=volume_id)
        self._services.compute.cast(call_context(self._context), inst.host, message)
