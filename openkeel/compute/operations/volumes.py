"""attach_volume and detach_volume on the compute host (Nova's, with their
``compute_attach_volume`` / ``compute_detach_volume`` events), and the volumes of a deleted
server.

Attach (a cast; the API made the mapping and reserved the volume): the host's connector goes
to Cinder (attachment update), the driver plugs the volume in, Cinder completes the
attachment (in-use), the mapping keeps the connection info. Any failure deletes the attachment
and the mapping, so the volume is available again and the server does not list it.
Detach (a cast; the API marked the volume detaching): the driver unplugs it, the attachment is
deleted, the mapping removed; a driver failure puts the volume back in-use.
Both hold the instance lock, as every operation on one instance does.
"""

from __future__ import annotations

import logging

from openkeel.compute import guest, notifying
from openkeel.compute.host import ComputeHost
from openkeel.db.repositories import block_devices
from openkeel.db.repositories.block_devices import VolumeMapping
from openkeel.domain.errors import NotFound
from openkeel.rpc.message import CallContext
from openkeel.virt.model import VolumeAttachment
from openkeel.volume import release
from openkeel.volume.adapter import VolumeAdapter, VolumeContext

LOG = logging.getLogger(__name__)


def volume_context(context: CallContext) -> VolumeContext:
    return VolumeContext(context.project_id, context.user_id, "admin" in context.roles,
                         auth_token=context.auth_token)  # fmt: skip


def connector(host: ComputeHost) -> dict[str, object]:
    """What Cinder learns of this host (os-brick's connector properties, simulated)."""
    return {"host": host.host, "ip": host.conf.my_ip, "platform": "x86_64",
            "os_type": "linux", "multipath": False,
            "initiator": f"iqn.2010-10.org.openkeel:{host.host}",
            **host.driver.volume_connector()}  # fmt: skip


def _volumes(host: ComputeHost) -> VolumeAdapter:
    if host.volumes is None:
        raise NotFound("No volume service is configured.")
    return host.volumes


def _mapping(host: ComputeHost, uuid: str, bdm_uuid: str) -> VolumeMapping | None:
    with host.records.db.connect() as conn:
        found = [m for m in block_devices.volumes_of(conn, uuid) if m.uuid == bdm_uuid]
    return found[0] if found else None


def attach_volume(host: ComputeHost, context: CallContext, uuid: str, bdm_uuid: str) -> None:
    """Connect the mapping's volume to the guest; never raises."""
    event = "compute_attach_volume"
    with host.locks.hold(uuid):
        mapping = _mapping(host, uuid, bdm_uuid)
        try:
            instance = host.records.get(uuid)
        except NotFound:
            instance = None
        if mapping is None or instance is None:
            LOG.info("Instance %s or its mapping %s went before attach_volume", uuid, bdm_uuid)
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event, {"volume_id": mapping.volume_id})
        failure: BaseException | None = None
        volumes, ctx = _volumes(host), volume_context(context)
        assert mapping.attachment_id is not None
        try:
            # As Nova: the device name goes with the connector (Cinder's mountpoint).
            wanted = {**connector(host), "mountpoint": mapping.device_name}
            info = volumes.attachment_update(ctx, mapping.attachment_id, wanted)
            attachment = VolumeAttachment(mapping.volume_id, mapping.device_name or "",
                                          info, tag=mapping.tag)  # fmt: skip
            host.driver.attach_volume(guest.instance_ref(host.conf, instance), attachment)
            volumes.attachment_complete(ctx, mapping.attachment_id)
            with host.records.db.begin() as conn:
                block_devices.set_connection(conn, bdm_uuid, info)
        except Exception as exc:
            LOG.exception("attaching volume %s to %s failed", mapping.volume_id, uuid)
            failure = exc
            _undo_attach(host, ctx, mapping)
            host.records.add_fault(uuid, exc, host.host)
        notifying.finished(host, context, uuid, event, failure, {"volume_id": mapping.volume_id})
        host.records.event_finish(uuid, context.request_id, event, failure)


def _undo_attach(host: ComputeHost, ctx: VolumeContext, mapping: VolumeMapping) -> None:
    try:
        if mapping.attachment_id:
            _volumes(host).attachment_delete(ctx, mapping.attachment_id)
    finally:
        with host.records.db.begin() as conn:
            block_devices.remove(conn, mapping.uuid)


def detach_volume(host: ComputeHost, context: CallContext, uuid: str, volume_id: str) -> None:
    """Disconnect the volume from the guest and give it back; never raises."""
    event = "compute_detach_volume"
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except NotFound:
            LOG.info("Instance %s disappeared before detach_volume", uuid)
            return
        with host.records.db.connect() as conn:
            mapping = block_devices.find(conn, uuid, volume_id)
        if mapping is None:
            LOG.info("Volume %s is not attached to %s", volume_id, uuid)
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event, {"volume_id": volume_id})
        failure: BaseException | None = None
        volumes, ctx = _volumes(host), volume_context(context)
        try:
            host.driver.detach_volume(guest.instance_ref(host.conf, instance), volume_id)
        except Exception as exc:
            LOG.exception("detaching volume %s from %s failed", volume_id, uuid)
            failure = exc
            volumes.roll_detaching(ctx, volume_id)
            host.records.add_fault(uuid, exc, host.host)
        if failure is None:
            if mapping.attachment_id:
                volumes.attachment_delete(ctx, mapping.attachment_id)
            with host.records.db.begin() as conn:
                block_devices.remove(conn, mapping.uuid)
        notifying.finished(host, context, uuid, event, failure, {"volume_id": volume_id})
        host.records.event_finish(uuid, context.request_id, event, failure)


def release_volumes(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """A deleted server's volumes (see :mod:`openkeel.volume.release`)."""
    # As the service: a periodic reclaim has no user, an admin may delete others' servers.
    ctx = VolumeContext(context.project_id, context.user_id, is_admin=True)
    release.release_volumes(host.records.db, host.volumes, ctx, uuid)
