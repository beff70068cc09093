"""Block device mappings of ``POST /servers`` against the volume service (Nova's
``_check_and_transform_bdm``, ``_validate_bdm`` and ``get_bdm_image_metadata``): the legacy
syntax turned into the new one, boot index order, the volumes, snapshots and images the
mappings name checked with Nova's 400s, the root device found (volume-backed or not), and each
existing volume reserved for its server (a Cinder attachment, as Nova's API makes it).

Called by ``create.py``: :func:`prepare` before anything is written, :func:`reserve` once the
servers have their uuids, :func:`unreserve` when the request fails after that.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import image_service
from openkeel.api.usecases.servers.bdm_parsing import InvalidBDMFormat
from openkeel.api.usecases.volume_zones import zone_for_create
from openkeel.clients.image import Caller, Image
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.flavors import Flavor
from openkeel.volume.adapter import VolumeAdapter, VolumeContext, VolumeInfo, VolumeType

LOG = logging.getLogger(__name__)

ROOT_DEVICE = "vda"
# Nova's DiskBus field values.
_DISK_BUSES = frozenset({"fdc", "ide", "sata", "scsi", "usb", "virtio", "xen", "lxc", "uml"})


class InvalidBDM(Invalid):
    """Nova's InvalidBDM family (400), with the message given."""


def _invalid_bdm(what: str, ident: str) -> InvalidBDM:
    return InvalidBDM(f"Block Device Mapping is Invalid: failed to get {what} {ident}.")


def _boot_sequence() -> InvalidBDM:
    return InvalidBDM(
        "Block Device Mapping is Invalid: Boot sequence for the instance and image/block "
        "device mapping combination is not valid."
    )


@dataclass(frozen=True)
class PreparedMappings:
    """The request's mappings in the new syntax, checked; what the root device is."""

    mappings: tuple[dict[str, Any], ...]
    volume_backed: bool = False
    # The image a volume-backed root comes from (image→volume), for the server's image_*
    # system metadata as Nova's boot metadata; None otherwise.
    root_image: Image | None = None
    # The volumes' availability zone the server takes ([cinder] cross_az_attach False).
    volume_zone: str | None = None


def _strip_dev(name: Any) -> str:
    text = str(name or "")
    return text[5:] if text.startswith("/dev/") else text


def _from_legacy(bdm: Mapping[str, Any]) -> dict[str, Any]:
    """One legacy mapping in the new syntax (Nova's BlockDeviceDict.from_legacy)."""
    new: dict[str, Any] = {
        "device_name": bdm.get("device_name"),
        "delete_on_termination": bool(bdm.get("delete_on_termination")),
        "no_device": bool(bdm.get("no_device")),
        "volume_size": bdm.get("volume_size"),
    }
    virtual = str(bdm.get("virtual_name") or "")
    if new["no_device"]:
        new.update(source_type="blank", destination_type="local")
    elif virtual == "swap" or virtual.startswith("ephemeral"):
        new.update(source_type="blank", destination_type="local", device_type="disk")
        new["guest_format"] = "swap" if virtual == "swap" else None
    elif bdm.get("snapshot_id"):
        new.update(source_type="snapshot", destination_type="volume",
                   snapshot_id=bdm["snapshot_id"])  # fmt: skip
    else:
        new.update(source_type="volume", destination_type="volume", volume_id=bdm["volume_id"])
    if new["volume_size"] is not None:
        new["volume_size"] = int(new["volume_size"])
    return new


def from_legacy(
    legacy: Sequence[Mapping[str, Any]], image_ref: str, no_root: bool = False
) -> list[dict[str, Any]]:
    """Nova's from_legacy_mapping with the root device ``vda``: a volume or snapshot on it is
    the root (boot index 0), else the image is, as an image→local mapping first. With
    ``no_root`` (the image's own mappings have the root) none is the root."""
    mappings = [_from_legacy(b) for b in legacy]
    if no_root:
        for bdm in mappings:
            bdm["boot_index"] = -1
        return mappings
    volume_backed = False
    for bdm in mappings:
        on_root = _strip_dev(bdm.get("device_name")) == ROOT_DEVICE
        if bdm["source_type"] in ("volume", "snapshot") and on_root and not bdm["no_device"]:
            bdm["boot_index"] = 0
            volume_backed = True
        else:
            bdm["boot_index"] = None if bdm["no_device"] else -1
    if not volume_backed and image_ref:
        image = {"source_type": "image", "destination_type": "local", "image_id": image_ref,
                 "boot_index": 0, "delete_on_termination": True, "no_device": False}  # fmt: skip
        mappings.insert(0, image)
    return mappings


def image_defined(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The mappings an image carries (``block_device_mapping`` with ``bdm_v2``, as a
    volume-backed server's snapshot has them); Nova's _get_image_defined_bdms for the new
    syntax (images with legacy mappings are not read)."""
    raw = properties.get("block_device_mapping")
    if not raw or str(properties.get("bdm_v2", "")).lower() not in ("true", "1", "yes"):
        return []
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        LOG.warning("Ignoring an image's unreadable block_device_mapping property")
        return []
    return [dict(b) for b in parsed if isinstance(b, Mapping)]


def transform(
    bdms: Sequence[Mapping[str, Any]],
    legacy: bool,
    image_ref: str,
    max_count: int,
    from_image: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The request's mappings in the new syntax merged with the image's (``from_image``: the
    request's override them by device name), with Nova's first checks."""
    if image_ref:
        for bdm in bdms:
            if (bdm.get("destination_type") == "volume" or bdm.get("volume_id")) and _strip_dev(
                bdm.get("device_name")
            ) == ROOT_DEVICE:
                raise Invalid(
                    f"The volume cannot be assigned the same device name as the root device "
                    f"{ROOT_DEVICE}"
                )
    root_in_image = any(_boot_index(b) == 0 for b in from_image)
    if legacy:
        mappings = from_legacy(bdms, image_ref, no_root=root_in_image)
    else:
        mappings = [dict(b) for b in bdms]
        if root_in_image:  # the image's root wins over an image mapping a client added
            mappings = [
                b for b in mappings
                if not (_boot_index(b) == 0 and b.get("source_type") == "image")
            ]  # fmt: skip
    names = {b.get("device_name") for b in mappings if b.get("device_name")}
    mappings += [dict(b) for b in from_image if b.get("device_name") not in names]
    if max_count > 1 and any(b.get("source_type") == "volume" for b in mappings):
        raise Invalid("Cannot attach one or more volumes to multiple instances")
    return [b for b in mappings if not b.get("no_device")]


def root_of(mappings: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The mapping with boot index 0."""
    for bdm in mappings:
        if _boot_index(bdm) == 0:
            return bdm
    return None


def _volume_type(wanted: str, types: Sequence[VolumeType]) -> str:
    """The name of the volume type named or numbered ``wanted`` (Nova's 400 otherwise)."""
    for known in types:
        if wanted in (known.id, known.name):
            return known.name
    raise Invalid(f"Volume type {wanted} could not be found.")


def _boot_index(bdm: Mapping[str, Any]) -> int | None:
    value = bdm.get("boot_index")
    return None if value is None else int(value)


def is_volume_backed(mappings: Sequence[Mapping[str, Any]]) -> bool:
    root = root_of(mappings)
    return root is not None and root.get("destination_type") == "volume"


class MappingChecker:
    """The checks that ask the volume and image services, for one caller."""

    def __init__(
        self,
        services: ApiServices,
        volumes: VolumeAdapter,
        context: VolumeContext,
        caller: Caller,
    ) -> None:
        self._services = services
        self._volumes = volumes
        self._context = context
        self._caller = caller
        self._images: dict[str, Image] = {}

    def prepare(
        self,
        mappings: list[dict[str, Any]],
        flavor: Flavor,
        image_ref: str,
        multiattach_ok: bool,
        zone: str | None = None,
    ) -> PreparedMappings:
        """Check the mappings (Nova's order: the existing volumes first, their zone against
        the server's ``zone``, then each mapping)."""
        if not mappings:
            return PreparedMappings(())
        found = self._existing_volumes(mappings)
        volume_zone = zone_for_create(self._services, zone, found.values())
        self._check_boot_sequence(mappings)
        types: list[VolumeType] | None = None
        for bdm in mappings:
            if bdm.get("volume_type"):
                types = types if types is not None else self._volumes.volume_types(self._context)
                bdm["volume_type"] = _volume_type(str(bdm["volume_type"]), types)
            self._check_one(bdm, found, image_ref, multiattach_ok)
        self._check_local(mappings, flavor)
        limit = int(self._services.conf.max_local_block_devices)
        local = [b for b in mappings if b.get("destination_type") == "local"]
        if 0 <= limit < len(local):
            raise InvalidBDM(
                "Block Device Mapping is Invalid: You specified more local devices than the "
                "limit allows"
            )
        root = root_of(mappings)
        volume_backed = root is not None and root.get("destination_type") == "volume"
        root_image = None
        if volume_backed and root is not None and not image_ref:
            root_image = self._root_metadata(root, found)
        return PreparedMappings(tuple(mappings), volume_backed, root_image, volume_zone)

    def _existing_volumes(self, mappings: Sequence[Mapping[str, Any]]) -> dict[str, VolumeInfo]:
        found: dict[str, VolumeInfo] = {}
        for bdm in mappings:
            volume_id = bdm.get("volume_id")
            if volume_id and volume_id not in found:
                try:
                    found[volume_id] = self._volumes.get(self._context, volume_id)
                except NotFound as exc:
                    # Nova's API answers VolumeNotFound with 400 on create.
                    raise Invalid(f"Volume {volume_id} could not be found.") from exc
        return found

    @staticmethod
    def _check_boot_sequence(mappings: Sequence[Mapping[str, Any]]) -> None:
        indexes = sorted(i for b in mappings if (i := _boot_index(b)) is not None and i >= 0)
        if not indexes or any(i != v for i, v in enumerate(indexes)):
            raise _boot_sequence()

    def _image(self, image_id: str) -> Image:
        if image_id not in self._images:
            try:
                self._images[image_id] = image_service(self._services).get(self._caller, image_id)
            except Exception as exc:
                raise _invalid_bdm("image", image_id) from exc
        return self._images[image_id]

    def _check_one(
        self,
        bdm: dict[str, Any],
        found: Mapping[str, VolumeInfo],
        image_ref: str,
        multiattach_ok: bool,
    ) -> None:
        source, destination = bdm.get("source_type"), bdm.get("destination_type")
        if bdm.get("image_id"):
            if bdm["image_id"] != image_ref:
                self._image(str(bdm["image_id"]))
            if source == "image" and destination == "volume" and not bdm.get("volume_size"):
                raise InvalidBDM(
                    "Images with destination_type 'volume' need to have a non-zero size specified"
                )
        elif bdm.get("volume_id"):
            volume = found[bdm["volume_id"]]
            if volume.multiattach and not multiattach_ok:
                raise Invalid(
                    "Multiattach volumes are only supported starting with compute API version 2.60."
                )
            bdm["volume_size"] = volume.size
        elif bdm.get("snapshot_id"):
            try:
                snapshot = self._volumes.get_snapshot(self._context, str(bdm["snapshot_id"]))
            except Exception as exc:
                raise _invalid_bdm("snapshot", str(bdm["snapshot_id"])) from exc
            bdm["volume_size"] = bdm.get("volume_size") or snapshot.size
        elif source == "blank" and destination == "volume" and not bdm.get("volume_size"):
            raise InvalidBDM(
                "Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size"
            )
        disk_bus = bdm.get("disk_bus")
        if disk_bus and disk_bus not in _DISK_BUSES:
            raise InvalidBDM("Block Device Mapping is Invalid.")

    @staticmethod
    def _check_local(mappings: Sequence[Mapping[str, Any]], flavor: Flavor) -> None:
        blank_local = [
            b for b in mappings
            if b.get("source_type") == "blank" and b.get("destination_type") == "local"
        ]  # fmt: skip
        swaps = [b for b in blank_local if b.get("guest_format") == "swap"]
        ephemeral = sum(
            int(b.get("volume_size") or flavor.ephemeral_gb)
            for b in blank_local
            if b.get("guest_format") != "swap"
        )
        if ephemeral > flavor.ephemeral_gb:
            raise InvalidBDM(
                "Ephemeral disks requested are larger than the instance type allows. If no "
                "size is given in one block device mapping, flavor ephemeral size will be used."
            )
        if len(swaps) > 1:
            raise InvalidBDMFormat("More than one swap drive requested.")
        if swaps and int(swaps[0].get("volume_size") or 0) > flavor.swap:
            raise InvalidBDM("Swap drive requested is larger than instance type allows.")

    def _root_metadata(
        self, root: Mapping[str, Any], found: Mapping[str, VolumeInfo]
    ) -> Image | None:
        """Nova's get_bdm_image_metadata: the image of an image→volume root; a volume root
        must be bootable."""
        if root.get("image_id"):
            return self._image(str(root["image_id"]))
        volume_id = root.get("volume_id")
        if volume_id and not found[volume_id].bootable:
            raise InvalidBDM(f"Block Device {volume_id} is not bootable.")
        return None

    # -- reservations -------------------------------------------------------------------------

    def reserve(
        self, mappings: Sequence[Mapping[str, Any]], instance_uuid: str
    ) -> tuple[dict[str, Any], ...]:
        """The server's copy of the mappings, each existing volume reserved for it (a Cinder
        attachment, as Nova's check_attach_and_reserve_volume); all or none."""
        reserved: list[dict[str, Any]] = []
        try:
            for bdm in mappings:
                mine = dict(bdm)
                if mine.get("source_type") == "volume" and mine.get("volume_id"):
                    mine["attachment_id"] = self._volumes.attachment_create(
                        self._context, str(mine["volume_id"]), instance_uuid
                    )
                reserved.append(mine)
        except Exception:
            self.unreserve(reserved)
            raise
        return tuple(reserved)

    def unreserve(self, mappings: Sequence[Mapping[str, Any]]) -> None:
        """Give back the reservations of a request that failed after :meth:`reserve`."""
        unreserve(self._volumes, self._context, mappings)


def unreserve(
    volumes: VolumeAdapter, context: VolumeContext, mappings: Sequence[Mapping[str, Any]]
) -> None:
    """Delete the attachments the API made for mappings no server will use (a request that
    failed, a server deleted before it was scheduled); a failure is logged."""
    for bdm in mappings:
        attachment_id = bdm.get("attachment_id")
        if not attachment_id:
            continue
        try:
            volumes.attachment_delete(context, str(attachment_id))
        except Exception:
            LOG.exception("Could not delete attachment %s", attachment_id)


def release_requested(
    volumes: VolumeAdapter, context: VolumeContext, mappings: Sequence[Mapping[str, Any]]
) -> None:
    """A server deleted before it was scheduled (Nova's _local_cleanup_bdm_volumes over the
    build request's mappings): the reservations deleted, the existing volumes it was to
    delete on termination deleted; a failure is logged."""
    unreserve(volumes, context, mappings)
    for bdm in mappings:
        if bdm.get("source_type") == "volume" and bdm.get("delete_on_termination"):
            try:
                volumes.delete(context, str(bdm["volume_id"]))
            except Exception:
                LOG.exception("Could not delete volume %s", bdm.get("volume_id"))
