"""The Cinder attachments of a server that moves to another host (Nova's
``_terminate_volume_connections``, ``_update_volume_attachments``,
``_complete_volume_attachments``, and the volume steps of ``pre_live_migration``,
``post_live_migration`` and ``_rollback_live_migration``).

A mapping's ``attachment_id`` is always the server's current attachment of that volume, so
whatever deletes the server later (terminate, the API's local delete) deletes the right one.

- :func:`reserve_anew`: a new attachment without a connector (the volume stays reserved for the
  server), then the old one deleted: the old host's connection is gone (resize_instance and
  revert_resize, shelve offload, evacuation).
- :func:`connect_here` then :func:`complete`: this host's connector given to the attachment,
  the connection info recorded, the attachment completed (finish_resize,
  finish_revert_resize, unshelve, evacuation).
- :func:`attach_for_live`: the live migration destination's new attachments with its connector,
  completed, while the source's still exist; :func:`drop_old` (the guest moved: the source's
  deleted) or :func:`restore_old` (rolled back: the new ones deleted, the mappings as they were).

Called by the resize, live migration, shelve and rebuild operations.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations import boot_volumes
from openkeel.compute.operations.volumes import connector, volume_context
from openkeel.db.repositories import block_devices
from openkeel.db.repositories.block_devices import DeviceMapping
from openkeel.domain.errors import ComputeError
from openkeel.rpc.message import CallContext
from openkeel.virt.model import BlockDevice
from openkeel.volume.adapter import VolumeAdapter, VolumeContext

LOG = logging.getLogger(__name__)


def attached_volumes(host: ComputeHost, uuid: str) -> list[DeviceMapping]:
    """The server's volume mappings that hold an attachment (the new attach flow's)."""
    with host.records.db.connect() as conn:
        devices = block_devices.devices_of(conn, uuid)
    return [d for d in devices if d.is_volume and d.volume_id and d.attachment_id]


def _volumes(host: ComputeHost) -> VolumeAdapter:
    if host.volumes is None:
        raise ComputeError("No volume service is configured.")
    return host.volumes


def _set(host: ComputeHost, bdm_uuid: str, **values: object) -> None:
    with host.records.db.begin() as conn:
        block_devices.set_fields(conn, bdm_uuid, **values)


def reserve_anew(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Replace each attachment with a reserved one (no connector) and delete the old one."""
    mappings = attached_volumes(host, uuid)
    if not mappings:
        return
    volumes, ctx = _volumes(host), volume_context(context)
    for mapping in mappings:
        assert mapping.volume_id is not None and mapping.attachment_id is not None
        new = volumes.attachment_create(ctx, mapping.volume_id, uuid)
        try:
            volumes.attachment_delete(ctx, mapping.attachment_id)
        except Exception:
            volumes.attachment_delete(ctx, new)  # keep the one the mapping names
            raise
        _set(host, mapping.uuid, attachment_id=new)


def connect_here(host: ComputeHost, context: CallContext, uuid: str) -> tuple[BlockDevice, ...]:
    """Give this host's connector to each attachment and record the connection info; the
    server's block devices for the driver."""
    mappings = attached_volumes(host, uuid)
    if mappings:
        volumes, ctx = _volumes(host), volume_context(context)
        for mapping in mappings:
            assert mapping.attachment_id is not None
            wanted = {**connector(host), "mountpoint": mapping.device_name}
            info = volumes.attachment_update(ctx, mapping.attachment_id, wanted)
            with host.records.db.begin() as conn:
                block_devices.set_connection(conn, mapping.uuid, info)
    return boot_volumes.attached(host, uuid)


def complete(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """This host attached the volumes: each attachment completed (the volume in-use)."""
    mappings = attached_volumes(host, uuid)
    if not mappings:
        return
    volumes, ctx = _volumes(host), volume_context(context)
    for mapping in mappings:
        assert mapping.attachment_id is not None
        volumes.attachment_complete(ctx, mapping.attachment_id)


def attach_for_live(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Live migration destination: a new attachment of each volume with this host's connector
    (the source's stays until the guest moved), recorded on the mapping and completed. A
    failure deletes the new ones and puts the mappings back, then raises."""
    mappings = attached_volumes(host, uuid)
    if not mappings:
        return
    volumes, ctx = _volumes(host), volume_context(context)
    made: list[tuple[DeviceMapping, str]] = []
    try:
        for mapping in mappings:
            assert mapping.volume_id is not None
            # the connector in the create, as Nova's pre_live_migration (decision 0068)
            wanted = {**connector(host), "mountpoint": mapping.device_name}
            new, info = volumes.attachment_create_connected(ctx, mapping.volume_id, uuid, wanted)
            made.append((mapping, new))
            _set(host, mapping.uuid, attachment_id=new)
            with host.records.db.begin() as conn:
                block_devices.set_connection(conn, mapping.uuid, info)
        for _mapping, new in made:
            volumes.attachment_complete(ctx, new)
    except Exception:
        restore_old(host, context, uuid, mappings)
        for _mapping, new in made:  # a new attachment not yet recorded on its mapping too
            _delete_quietly(volumes, ctx, new)
        raise


def drop_old(host: ComputeHost, context: CallContext, originals: Sequence[DeviceMapping]) -> None:
    """The guest moved: the source's attachments (``originals``) deleted; failures logged."""
    if not originals or host.volumes is None:
        return
    ctx = volume_context(context)
    for original in originals:
        if original.attachment_id:
            _delete_quietly(host.volumes, ctx, original.attachment_id)


def restore_old(
    host: ComputeHost, context: CallContext, uuid: str, originals: Sequence[DeviceMapping]
) -> None:
    """A rolled back live migration: each mapping whose attachment is no longer the original
    one has its new attachment deleted and the original attachment and connection info back
    (Nova's _rollback_volume_bdms)."""
    if not originals or host.volumes is None:
        return
    ctx = volume_context(context)
    current = {m.uuid: m for m in attached_volumes(host, uuid)}
    for original in originals:
        now = current.get(original.uuid)
        if now is None or now.attachment_id == original.attachment_id:
            continue
        assert now.attachment_id is not None
        _delete_quietly(host.volumes, ctx, now.attachment_id)
        _set(host, original.uuid, attachment_id=original.attachment_id)
        with host.records.db.begin() as conn:
            block_devices.set_connection(conn, original.uuid, original.connection_info)


def _delete_quietly(volumes: VolumeAdapter, ctx: VolumeContext, attachment_id: str) -> None:
    try:
        volumes.attachment_delete(ctx, attachment_id)
    except Exception:
        LOG.exception("Could not delete volume attachment %s", attachment_id)
