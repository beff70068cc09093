"""What Cinder changes under an attached volume and tells the compute host about: a volume
extended (the ``volume-extended`` external event, Nova's extend_volume) and the snapshots of
file-based volumes Cinder asks the host to take or merge (os-assisted-volume-snapshots, Nova's
volume_snapshot_create / volume_snapshot_delete).

Called by openkeel.compute.external_events and the compute endpoint. None raises: a failure is
logged (and, for the extend, recorded as the ``compute_extend_volume`` event's error and a
fault on the server, as Nova's decorators do).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.db.repositories import block_devices
from openkeel.domain.errors import NotFound
from openkeel.rpc.message import CallContext
from openkeel.virt.model import JsonValue, VolumeAttachment
from openkeel.volume.adapter import VolumeContext

LOG = logging.getLogger(__name__)
GIB = 1024**3


def extend_volume(host: ComputeHost, context: CallContext, uuid: str, volume_id: str) -> None:
    """The attached ``volume_id`` grew: record its size on the mapping and tell the driver.
    A volume that is not attached (or never connected) is a logged no-op, as in Nova."""
    event = "compute_extend_volume"
    with host.locks.hold(uuid):
        instance = host.records.get(uuid)
        with host.records.db.connect() as conn:
            mapping = block_devices.find(conn, uuid, volume_id)
        if mapping is None or not mapping.connection_info:
            LOG.warning("Extend volume failed, volume %s is not attached to instance %s",
                        volume_id, uuid)  # fmt: skip
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        failure: BaseException | None = None
        try:
            if host.volumes is None:
                raise NotFound("No volume service is configured.")
            ctx = VolumeContext(context.project_id, context.user_id, is_admin=True)
            size = host.volumes.get(ctx, volume_id).size
            with host.records.db.begin() as conn:
                block_devices.set_size(conn, mapping.uuid, size)
            attachment = VolumeAttachment(volume_id, mapping.device_name or "",
                                          mapping.connection_info, tag=mapping.tag)  # fmt: skip
            ref = guest.instance_ref(host.conf, instance)
            host.driver.extend_volume(ref, attachment, size * GIB)
        except Exception as exc:
            LOG.warning("Extend volume failed, volume_id=%s, reason: %s", volume_id, exc)
            failure = exc
            host.records.add_fault(uuid, exc, host.host)
        host.records.event_finish(uuid, context.request_id, event, failure)


def volume_snapshot_create(
    host: ComputeHost, uuid: str, volume_id: str, create_info: Mapping[str, JsonValue]
) -> None:
    """Take Cinder's snapshot of the attached volume (the driver's work)."""
    try:
        ref = guest.instance_ref(host.conf, host.records.get(uuid))
        host.driver.volume_snapshot_create(ref, volume_id, create_info)
    except Exception:
        LOG.exception("Assisted snapshot of volume %s on %s failed", volume_id, uuid)


def volume_snapshot_delete(
    host: ComputeHost,
    uuid: str,
    volume_id: str,
    snapshot_id: str,
    delete_info: Mapping[str, JsonValue],
) -> None:
    """Delete Cinder's snapshot of the attached volume (the driver's work)."""
    try:
        ref = guest.instance_ref(host.conf, host.records.get(uuid))
        host.driver.volume_snapshot_delete(ref, volume_id, snapshot_id, delete_info)
    except Exception:
        LOG.exception("Deleting assisted snapshot %s of %s on %s failed", snapshot_id,
                      volume_id, uuid)  # fmt: skip
