"""PUT ``/servers/{server_id}/os-volume_attachments/{volume_id}``: swap a server's volume for
another, and from 2.85 update the attachment (Nova 34's ``update``).

Policy: below 2.85, and from 2.85 whenever the body's ``volumeId`` differs from the path's,
``...:swap`` (admin or service by default: Cinder calls it while it migrates a volume);
otherwise ``...:update`` on the server's project. From 2.85 the attachment is updated first:
only ``delete_on_termination`` may change; ``id``, ``serverId``, ``device`` and ``tag`` may be
given but must equal what the attachment has (400 otherwise), an unknown attachment is 404.

The swap, in Nova's order: the old volume (404), Cinder migrating it (409 otherwise: Nova 34
answers swaps only to Cinder), the new volume (400: it is named in the body), the lock and the
state (409), the old volume attached to this server, the new one not attached, not smaller
(400 each), the old volume marked detaching (400 when Cinder refuses), at most one attachment
of it (400), the new one not attached here already (400), the new volume reserved (Cinder's
attachment), the action recorded and ``swap_volume`` cast to the host. A failure after the old
volume was marked detaching gives both volumes back as they were.
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.api.usecases.volume_attachments import POLICY, ServerVolumes
from openkeel.db.repositories import block_devices
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.domain.instances import Instance
from openkeel.rpc.messages.compute import SwapVolume
from openkeel.volume.adapter import VolumeInfo
from openkeel.volume.errors import VolumeNotFound


@dataclass(frozen=True)
class AttachmentUpdate:
    """The body of the PUT (the fields the client gave; None: not given)."""

    volume_id: str
    only_swap: bool  # below 2.85: the PUT is a swap and nothing else
    id: str | None = None
    server_id: str | None = None
    device: str | None = None
    tag: str | None = None
    delete_on_termination: bool | None = None
    given: frozenset[str] = frozenset()


class VolumeUpdates(ServerVolumes):
    """The update and swap of a server's volume attachment."""

    def update(self, server_id: str, volume_id: str, wanted: AttachmentUpdate) -> None:
        found = self._found(server_id)
        swapping = wanted.only_swap or wanted.volume_id != volume_id
        if swapping:
            self._context.can(POLICY % "swap", {})
        else:
            self._context.can(POLICY % "update", {"project_id": found.instance.project_id})
        if not wanted.only_swap:
            self._update_regular(found, volume_id, wanted)
        if swapping:
            self._swap(found, volume_id, wanted.volume_id)

    def _found(self, server_id: str) -> FoundServer:
        found = find_server(self._services, self._context, server_id)
        if found.cell_uuid is None:
            raise Conflict(f"Instance {server_id} is not ready")
        return found

    def _update_regular(self, found: FoundServer, volume_id: str, wanted: AttachmentUpdate) -> None:
        inst = found.instance
        db = self._services.cell_dbs[self._cell(found)]
        with db.connect() as conn:
            mapping = block_devices.find(conn, inst.uuid, volume_id)
        if mapping is None:
            raise NotFound(f"No volume Block Device Mapping with id {volume_id}.")
        for name, mine in (("id", volume_id), ("serverId", inst.uuid),
                           ("device", mapping.device_name), ("tag", mapping.tag)):  # fmt: skip
            if name in wanted.given and getattr(wanted, _FIELDS[name]) != mine:
                raise Invalid(f"The {name} property is not mutable")
        if wanted.delete_on_termination is not None:
            with db.begin() as conn:
                block_devices.update_delete_on_termination(
                    conn, mapping.uuid, wanted.delete_on_termination
                )

    def _swap(self, found: FoundServer, old_id: str, new_id: str) -> None:
        old = self._volumes.get(self._volume_context, old_id)
        if not old.migration_status:
            raise Conflict(f"volume {old_id} is not migrating; this API should only be called "
                           "by Cinder")  # fmt: skip
        try:
            new = self._volumes.get(self._volume_context, new_id)
        except VolumeNotFound as exc:
            raise Invalid(str(exc)) from exc
        inst = found.instance
        self._ready(inst, "swap_volume")
        _check_pair(inst, old, new)
        self._volumes.begin_detaching(self._volume_context, old.id)
        try:
            attachment_id = self._reserve(found, old, new)
            self._record(found, "swap_volume")
            assert self._services.compute is not None and inst.host
            message = SwapVolume(inst.uuid, old_volume_id=old.id, new_volume_id=new.id,
                                 new_attachment_id=attachment_id)  # fmt: skip
        except BaseException:
            self._volumes.roll_detaching(self._volume_context, old.id)
            raise
        try:
            self._services.compute.cast(call_context(self._context), inst.host, message)
        except BaseException:
            self._volumes.roll_detaching(self._volume_context, old.id)
            self._volumes.attachment_delete(self._volume_context, attachment_id)
            raise

    def _reserve(self, found: FoundServer, old: VolumeInfo, new: VolumeInfo) -> str:
        if len(old.attachments) > 1:
            raise Invalid("Swapping multi-attach volumes with more than one read/write "
                          "attachment is not supported.")  # fmt: skip
        db = self._services.cell_dbs[self._cell(found)]
        with db.connect() as conn:
            if block_devices.find(conn, found.instance.uuid, old.id) is None:
                raise NotFound(f"No volume Block Device Mapping with id {old.id}.")
            if block_devices.find(conn, found.instance.uuid, new.id) is not None:
                raise Invalid(f"Invalid volume: volume {new.id} already attached")
        return self._volumes.attachment_create(self._volume_context, new.id, found.instance.uuid)


_FIELDS = {"id": "id", "serverId": "server_id", "device": "device", "tag": "tag"}


def _check_pair(inst: Instance, old: VolumeInfo, new: VolumeInfo) -> None:
    """Nova's compute API checks of the two volumes (400 each)."""
    if not any(a.server_id == inst.uuid for a in old.attachments):
        raise Invalid("Invalid volume: Old volume is attached to a different instance.")
    if new.status in ("in-use", "detaching"):
        raise Invalid("Invalid volume: New volume must be detached in order to swap.")
    if new.size < old.size:
        raise Invalid("Invalid volume: New volume must be the same size or larger.")
