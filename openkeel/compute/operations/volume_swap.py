"""swap_volume on the compute host (Nova's, with its ``compute_swap_volume`` event and the
``instance.volume_swap.start/end/error`` notifications).

A cast from the API, which marked the old volume detaching and reserved the new one (its
attachment ``new_attachment_id``). Here, holding the instance lock: the host's connector goes
to Cinder for the new attachment, the driver copies the old volume to the new one and gives
the guest the new one at the same device, Cinder completes the new attachment and deletes the
old one (the old volume is available, the new in-use). When Cinder is migrating the old volume
(its ``migration_status`` is ``migrating``), Cinder is told (migrate_volume_completion) and
answers which id the mapping keeps: the old one, the ids swapping on Cinder's side. The
mapping then names that volume, the new attachment and connection, and the new size.

A failure anywhere rolls back: the new attachment is deleted (the new volume available), the
old volume is in-use again, the mapping untouched, a fault recorded on the server; never
raises.
"""

from __future__ import annotations

import logging
from typing import Any

from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.volumes import connector
from openkeel.db.repositories import block_devices
from openkeel.db.repositories.block_devices import VolumeMapping
from openkeel.domain.errors import NotFound
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import SwapVolume
from openkeel.virt.model import VolumeAttachment
from openkeel.volume.adapter import VolumeAdapter, VolumeContext

LOG = logging.getLogger(__name__)
EVENT = "compute_swap_volume"


class _Swap:
    """One swap's state: what to roll back and what the mapping becomes."""

    def __init__(self, host: ComputeHost, ctx: VolumeContext, msg: SwapVolume) -> None:
        if host.volumes is None:
            raise NotFound("No volume service is configured.")
        self.host, self.ctx, self.msg = host, ctx, msg
        self.volumes: VolumeAdapter = host.volumes
        self.cinder_migration = False
        self.resize_to = 0
        self.new_info: dict[str, Any] | None = None

    def run(self, mapping: VolumeMapping) -> None:
        msg, volumes = self.msg, self.volumes
        old = volumes.get(self.ctx, msg.old_volume_id)
        new = volumes.get(self.ctx, msg.new_volume_id)
        self.cinder_migration = old.migration_status == "migrating"
        self.resize_to = new.size if new.size > old.size else 0
        if msg.new_attachment_id is None:
            raise NotFound(f"No attachment of volume {msg.new_volume_id} to swap to")
        wanted = {**connector(self.host), "mountpoint": mapping.device_name}
        self.new_info = volumes.attachment_update(self.ctx, msg.new_attachment_id, wanted)
        device = mapping.device_name or ""
        before = VolumeAttachment(msg.old_volume_id, device, mapping.connection_info, tag=mapping.tag)  # fmt: skip
        after = VolumeAttachment(msg.new_volume_id, device, self.new_info, tag=mapping.tag)
        instance = self.host.records.get(msg.instance_uuid)
        ref = guest.instance_ref(self.host.conf, instance)
        self.host.driver.swap_volume(ref, before, after, self.resize_to)
        volumes.attachment_complete(self.ctx, msg.new_attachment_id)

    def roll_back(self) -> None:
        self.volumes.roll_detaching(self.ctx, self.msg.old_volume_id)
        if self.msg.new_attachment_id:
            self.volumes.attachment_delete(self.ctx, self.msg.new_attachment_id)

    def saved_volume_id(self, failed: bool) -> str:
        """The volume the mapping names now (Cinder decides when it migrates)."""
        msg = self.msg
        if not self.cinder_migration:
            return msg.new_volume_id
        return self.volumes.migrate_volume_completion(
            self.ctx, msg.old_volume_id, msg.new_volume_id, error=failed
        )

    def record(self, mapping: VolumeMapping, volume_id: str) -> None:
        info = dict(self.new_info or {})
        info["serial"] = info["volume_id"] = volume_id
        if isinstance(info.get("data"), dict):
            info["data"] = {**info["data"], "volume_id": volume_id}
        with self.host.records.db.begin() as conn:
            block_devices.swapped(conn, mapping.uuid, volume_id, self.msg.new_attachment_id,
                                  info, self.resize_to or None)  # fmt: skip


def swap_volume(host: ComputeHost, context: CallContext, msg: SwapVolume) -> None:
    """Swap the server's volume ``old_volume_id`` for ``new_volume_id``; never raises."""
    uuid = msg.instance_uuid
    ids = {"old_volume_id": msg.old_volume_id, "new_volume_id": msg.new_volume_id}
    with host.locks.hold(uuid):
        try:
            host.records.get(uuid)
        except NotFound:
            LOG.info("Instance %s went before swap_volume", uuid)
            return
        host.records.event_start(uuid, context.request_id, EVENT, host.host)
        notifying.started(host, context, uuid, EVENT, ids)
        failure = _swap(host, context, msg)
        notifying.finished(host, context, uuid, EVENT, failure, ids)
        host.records.event_finish(uuid, context.request_id, EVENT, failure)


def _swap(host: ComputeHost, context: CallContext, msg: SwapVolume) -> BaseException | None:
    # As Nova, with the service's rights (context.elevated()): the volumes may be the
    # user's, the request an admin's.
    ctx = VolumeContext(context.project_id, context.user_id, is_admin=True)
    with host.records.db.connect() as conn:
        mapping = block_devices.find(conn, msg.instance_uuid, msg.old_volume_id)
    try:
        if mapping is None:
            raise NotFound(f"Volume {msg.old_volume_id} is not attached to {msg.instance_uuid}")
        swap = _Swap(host, ctx, msg)
    except NotFound as exc:
        host.records.add_fault(msg.instance_uuid, exc, host.host)
        _give_back(host, ctx, msg)
        return exc
    failure: BaseException | None = None
    try:
        swap.run(mapping)
    except Exception as exc:
        LOG.exception("Swapping volume %s for %s on %s failed", msg.old_volume_id,
                      msg.new_volume_id, msg.instance_uuid)  # fmt: skip
        failure = exc
        swap.roll_back()
    try:
        if failure is None and mapping.attachment_id:
            swap.volumes.attachment_delete(ctx, mapping.attachment_id)
        saved = swap.saved_volume_id(failure is not None)
        if failure is None:
            swap.record(mapping, saved)
    except Exception as exc:
        LOG.exception("Completing the swap of volume %s failed", msg.old_volume_id)
        failure = failure or exc
    if failure is not None:
        host.records.add_fault(msg.instance_uuid, failure, host.host)
    return failure


def _give_back(host: ComputeHost, ctx: VolumeContext, msg: SwapVolume) -> None:
    """Nothing could start: leave the volumes as they were before the API's request."""
    if host.volumes is None:
        return
    try:
        host.volumes.roll_detaching(ctx, msg.old_volume_id)
        if msg.new_attachment_id:
            host.volumes.attachment_delete(ctx, msg.new_attachment_id)
    except Exception:
        LOG.exception("Giving back the volumes of a swap on %s failed", msg.instance_uuid)
