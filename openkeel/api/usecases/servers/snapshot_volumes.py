"""createImage of a volume-backed server (Nova's ``snapshot_volume_backed``), done by the API
itself: a forced Cinder snapshot of each volume the server has, and an image without data
(size 0, activated as ``raw``/``bare`` as Nova's Glance client does) whose
``block_device_mapping`` property (``bdm_v2``) maps those snapshots (and the local disks) the
way the server had them, so a server booted from the image gets volumes made from them.

Called by ``snapshot.py``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import caller_of, image_service
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.clients.image import Image, ImageBadRequest, ImageData
from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices, instance_actions
from openkeel.db.repositories.block_devices import DeviceMapping
from openkeel.volume.adapter import VolumeContext
from openkeel.volume.factory import get_volume_adapter

LOG = logging.getLogger(__name__)

ROOT_DEVICE_NAME = "/dev/vda"
# What a mapping in an image keeps (Nova's BlockDeviceDict without the database-only fields).
_IMAGE_MAPPING_FIELDS = ("source_type", "destination_type", "snapshot_id", "volume_id",
                         "image_id", "disk_bus", "device_type", "boot_index",
                         "delete_on_termination", "volume_size", "device_name",
                         "guest_format", "volume_type", "tag", "no_device")  # fmt: skip


def _image_mapping(device: DeviceMapping, **changes: Any) -> dict[str, Any]:
    mapping = {name: getattr(device, name, None) for name in _IMAGE_MAPPING_FIELDS}
    mapping["no_device"] = None
    mapping.update(changes)
    return mapping


class VolumeBackedSnapshot:
    """One volume-backed createImage for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def create(self, found: FoundServer, wanted: Image) -> Image:
        """Snapshot the volumes, then register and activate the image; the image."""
        ctx = self._context
        cell = self._services.cell_dbs[found.cell_uuid or ""]
        uuid = found.instance.uuid
        with reader(cell).connect() as conn:
            devices = block_devices.devices_of(conn, uuid)
        with cell.begin() as conn:
            instance_actions.start_action(
                conn, uuid, "createImage", request_id=ctx.request_id, user_id=ctx.user_id,
                project_id=ctx.project_id,
            )  # fmt: skip
        mapping = self._mapping(devices, wanted.name or "")
        properties = {
            key: value
            for key, value in wanted.properties.items()
            if key not in ("block_device_mapping", "bdm_v2", "root_device_name")
        }
        properties["root_device_name"] = ROOT_DEVICE_NAME
        if mapping:
            properties["block_device_mapping"] = json.dumps(mapping)
            properties["bdm_v2"] = "True"
        images = image_service(self._services)
        caller = caller_of(ctx)
        queued = images.create(
            caller,
            Image(
                id="", name=wanted.name, status="queued", visibility=wanted.visibility,
                min_ram=wanted.min_ram, min_disk=wanted.min_disk, size=0,
                properties=properties,
            ),
        )  # fmt: skip
        # Nova's Glance client activates an image without data by uploading nothing as raw;
        # a catalog that keeps no data (the compute API's own) activates it as data kept
        # elsewhere, with its size 0.
        try:
            return images.upload(caller, queued.id, ImageData("raw", "bare", iter(()), 0))
        except ImageBadRequest:
            return images.upload(caller, queued.id, ImageData("raw", "bare", None, 0))

    def _mapping(self, devices: list[DeviceMapping], name: str) -> list[dict[str, Any]]:
        ctx = self._context
        volumes = get_volume_adapter(self._services.conf, self._services.api_db)
        as_user = VolumeContext(ctx.project_id, ctx.user_id, ctx.is_admin)
        mapping = []
        for device in devices:
            if not device.is_volume:
                mapping.append(_image_mapping(device))
                continue
            if device.volume_id is None:
                continue
            volume = volumes.get(as_user, device.volume_id)
            snapshot = volumes.create_snapshot(
                as_user, volume.id, f"snapshot for {name}", volume.description, True
            )
            mapping.append(
                _image_mapping(
                    device, source_type="snapshot", destination_type="volume",
                    snapshot_id=snapshot.id, volume_id=None, image_id=None,
                    volume_size=device.volume_size or volume.size, guest_format=None,
                    volume_type=None, tag=None,
                )
            )  # fmt: skip
        return mapping
