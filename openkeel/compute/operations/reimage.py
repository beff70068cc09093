"""The root volume of a volume-backed server rebuilt with ``reimage_boot_volume`` (2.93; Nova's
_rebuild_volume_backed_instance).

:func:`reimage_root` (task state ``rebuilding``, the guest destroyed): a new attachment of
the root volume without a connector (the volume stays ``reserved`` throughout), the old
attachment deleted and the mapping given the new one, then Cinder's ``os-reimage`` with
``reimage_reserved`` and a wait for its ``volume-reimaged`` event (``[DEFAULT]
reimage_timeout_per_gb`` seconds per GB of the image, rounded up, at least one). Any failure is Nova's
"Build of instance X aborted: Failed to rebuild volume backed instance." (the caller puts
the server in ERROR with that fault); the mapping always names the one attachment the volume
has, so the server's delete releases it. :func:`attach_root` (task state
``rebuild_block_device_mapping``): the reserved attachment given this host's connector and
completed, its connection info recorded for the driver.

A delete of the server releases the wait at once (:func:`openkeel.compute.operations.delete`
cancels the instance's ``volume-reimaged`` waiter): Nova's delete waits for the time-out.

Called by ``operations/rebuild.py``.
"""

from __future__ import annotations

import logging

from openkeel.compute.host import ComputeHost
from openkeel.compute.operations.outcome import image_caller
from openkeel.compute.operations.volumes import connector, volume_context
from openkeel.db.repositories import block_devices
from openkeel.db.repositories.block_devices import DeviceMapping
from openkeel.domain.errors import ComputeError
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)

EVENT_NAME = "volume-reimaged"
GIB = 1024**3


class RebuildAborted(ComputeError):
    """Nova's BuildAbortException for a rebuild."""

    def __init__(self, uuid: str, reason: str) -> None:
        super().__init__(f"Build of instance {uuid} aborted: {reason}")


def root_mapping(host: ComputeHost, uuid: str) -> DeviceMapping | None:
    """The server's root mapping when it is a volume (boot index 0)."""
    with host.records.db.connect() as conn:
        devices = block_devices.devices_of(conn, uuid)
    return next((d for d in devices if d.boot_index == 0 and d.is_volume and d.volume_id), None)


def _image_gb(host: ComputeHost, context: CallContext, uuid: str, image_id: str) -> int:
    if host.images is None:
        raise RebuildAborted(uuid, f"Image {image_id} not found.")
    try:
        size = host.images.get(image_caller(context), image_id).size or 0
    except Exception as exc:
        LOG.error("Image %s of the rebuild of %s: %s", image_id, uuid, exc)
        raise RebuildAborted(uuid, f"Image {image_id} not found.") from exc
    # An image without a size (its data kept elsewhere) counts as 1 GB, not a zero wait.
    return max(1, -(-size // GIB))


def reimage_root(host: ComputeHost, context: CallContext, uuid: str, image_id: str) -> None:
    """Re-reserve the root volume, have it reimaged and wait for the volume service's event.
    Raises :class:`RebuildAborted`."""
    root = root_mapping(host, uuid)
    if root is None or host.volumes is None:
        return
    volumes, ctx, volume_id = host.volumes, volume_context(context), str(root.volume_id)
    new_attachment = None
    try:
        new_attachment = volumes.attachment_create(ctx, volume_id, uuid)
        with host.records.db.begin() as conn:
            block_devices.set_fields(conn, root.uuid, attachment_id=new_attachment)
        if root.attachment_id:
            volumes.attachment_delete(ctx, root.attachment_id)
    except Exception as exc:
        LOG.exception("Re-reserving root volume %s of %s failed", volume_id, uuid)
        raise RebuildAborted(uuid, "Failed to rebuild volume backed instance.") from exc
    timeout = int(host.conf.reimage_timeout_per_gb) * _image_gb(host, context, uuid, image_id)
    try:
        with host.events.waiting_for(uuid, [(EVENT_NAME, volume_id)], timeout=timeout):
            volumes.reimage(ctx, volume_id, image_id, reimage_reserved=True)
    except Exception as exc:
        LOG.error("Failed to rebuild volume backed instance %s: %s", uuid, exc)
        raise RebuildAborted(uuid, "Failed to rebuild volume backed instance.") from exc


def attach_root(host: ComputeHost, context: CallContext, uuid: str) -> None:
    """Give the reserved root attachment this host's connector and complete it."""
    root = root_mapping(host, uuid)
    if root is None or host.volumes is None or not root.attachment_id:
        return
    ctx = volume_context(context)
    wanted = {**connector(host), "mountpoint": root.device_name}
    info = host.volumes.attachment_update(ctx, root.attachment_id, wanted)
    host.volumes.attachment_complete(ctx, root.attachment_id)
    with host.records.db.begin() as conn:
        block_devices.set_connection(conn, root.uuid, info)
