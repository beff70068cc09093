"""The block device mapping rules of ``POST /servers`` that need no running service: the
legacy syntax turned into the new one (Nova's from_legacy_mapping), the first checks, boot
index order, sizes, local disks against the flavor, and the reservations given back when one
of several fails."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.create_volumes import (
    MappingChecker,
    from_legacy,
    is_volume_backed,
    transform,
)
from openkeel.clients.image import Caller
from openkeel.domain.errors import Invalid
from openkeel.domain.flavors import Flavor
from openkeel.volume.adapter import SnapshotInfo, VolumeContext, VolumeInfo
from openkeel.volume.errors import InvalidVolume, VolumeNotFound

FLAVOR = Flavor(1, "1", "tiny", 512, 1, 1, 2, 256, 1.0, None, False, True, None)
VOL = "6e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10"


class _Volumes:
    """A volume service with a few volumes; attachment create fails on ``refuse``."""

    def __init__(self, *volumes: VolumeInfo, refuse: str | None = None) -> None:
        self.volumes = {v.id: v for v in volumes}
        self.refuse = refuse
        self.attachments: dict[str, str] = {}

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        if volume_id not in self.volumes:
            raise VolumeNotFound(volume_id)
        return self.volumes[volume_id]

    def get_snapshot(self, context: VolumeContext, snapshot_id: str) -> SnapshotInfo:
        return SnapshotInfo(snapshot_id, VOL, "available", 3)

    def attachment_create(self, context: VolumeContext, volume_id: str, uuid: str) -> str:
        if volume_id == self.refuse:
            raise InvalidVolume("in use")
        ident = f"att-{len(self.attachments)}"
        self.attachments[ident] = volume_id
        return ident

    def attachment_delete(self, context: VolumeContext, attachment_id: str) -> None:
        self.attachments.pop(attachment_id, None)


def _volume(ident: str = VOL, **attrs: Any) -> VolumeInfo:
    return VolumeInfo(**{"id": ident, "status": "available", "size": 4, "multiattach": False,
                         "availability_zone": "nova", "bootable": True, **attrs})  # fmt: skip


class _Services:
    """What the checker reads of the services here: the options (no image is looked up)."""

    class conf:
        max_local_block_devices = 3

        class cinder:
            cross_az_attach = True  # Nova's default: no zone check


def _checker(volumes: _Volumes) -> MappingChecker:
    services = cast(ApiServices, _Services())
    return MappingChecker(services, cast(Any, volumes), VolumeContext("p"), Caller("p"))


def test_legacy_volume_on_vda_is_the_root() -> None:
    legacy = [{"volume_id": VOL, "device_name": "/dev/vda", "delete_on_termination": True},
              {"virtual_name": "swap", "device_name": "vdb", "volume_size": 1}]  # fmt: skip
    mappings = from_legacy(legacy, "")
    assert [(m["source_type"], m["destination_type"], m["boot_index"]) for m in mappings] == [
        ("volume", "volume", 0),
        ("blank", "local", -1),
    ]
    assert mappings[1]["guest_format"] == "swap" and is_volume_backed(mappings)


def test_legacy_data_volume_with_an_image_puts_the_image_first() -> None:
    mappings = from_legacy([{"snapshot_id": "s1", "device_name": "vdb"}], "img")
    assert [(m["source_type"], m["boot_index"]) for m in mappings] == [
        ("image", 0),
        ("snapshot", -1),
    ]
    assert not is_volume_backed(mappings)


@pytest.mark.parametrize(
    ("bdms", "image", "count", "message"),
    [
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "device_name": "/dev/vda", "boot_index": 1}], "img", 1,
         "The volume cannot be assigned the same device name as the root device vda"),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0}], "", 2, "Cannot attach one or more volumes to multiple instances"),
    ],
)  # fmt: skip
def test_transform_errors(bdms: list[dict[str, Any]], image: str, count: int, message: str) -> None:
    with pytest.raises(Invalid) as caught:
        transform(bdms, False, image, count)
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("bdms", "message"),
    [
        ([{"source_type": "blank", "destination_type": "local", "boot_index": 1}],
         "Block Device Mapping is Invalid: Boot sequence for the instance and image/block "
         "device mapping combination is not valid."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0}, {"source_type": "blank", "destination_type": "local",
           "boot_index": 2}],
         "Block Device Mapping is Invalid: Boot sequence for the instance and image/block "
         "device mapping combination is not valid."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": "nope",
           "boot_index": 0}], "Volume nope could not be found."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0, "disk_bus": "floppy"}], "Block Device Mapping is Invalid."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0}, {"source_type": "blank", "destination_type": "local",
           "boot_index": -1, "volume_size": 3}],
         "Ephemeral disks requested are larger than the instance type allows. If no size is "
         "given in one block device mapping, flavor ephemeral size will be used."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0}, {"source_type": "blank", "destination_type": "local",
           "boot_index": -1, "guest_format": "swap", "volume_size": 512}],
         "Swap drive requested is larger than instance type allows."),
        ([{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
           "boot_index": 0}] + [{"source_type": "blank", "destination_type": "local",
           "boot_index": -1, "guest_format": "swap"}] * 2,
         "Block Device Mapping is Invalid: More than one swap drive requested."),
    ],
)  # fmt: skip
def test_mapping_checks(bdms: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(Invalid) as caught:
        _checker(_Volumes(_volume())).prepare([dict(b) for b in bdms], FLAVOR, "", False)
    assert caught.value.message == message


def test_sizes_come_from_the_volume_and_the_snapshot() -> None:
    bdms = [{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
             "boot_index": 0},
            {"source_type": "snapshot", "destination_type": "volume", "snapshot_id": "s1",
             "boot_index": 1}]  # fmt: skip
    prepared = _checker(_Volumes(_volume())).prepare(bdms, FLAVOR, "", False)
    assert prepared.volume_backed and prepared.root_image is None
    assert [m["volume_size"] for m in prepared.mappings] == [4, 3]


def test_a_refused_reservation_gives_back_the_others() -> None:
    other = "7e1e2b57-7d5d-4b8b-9d59-3f4a1c2b9e10"
    volumes = _Volumes(_volume(), _volume(other), refuse=other)
    bdms = [{"source_type": "volume", "destination_type": "volume", "volume_id": v,
             "boot_index": i} for i, v in enumerate((VOL, other))]  # fmt: skip
    checker = _checker(volumes)
    prepared = checker.prepare(bdms, FLAVOR, "", False)
    with pytest.raises(InvalidVolume):
        checker.reserve(prepared.mappings, "server-1")
    assert volumes.attachments == {}
    reserved = _checker(_Volumes(_volume())).reserve(prepared.mappings[:1], "server-1")
    assert reserved[0]["attachment_id"] == "att-0"


def test_local_devices_beyond_max_local_block_devices() -> None:
    no_ephemeral = dataclasses.replace(FLAVOR, ephemeral_gb=0)
    bdms = [{"source_type": "volume", "destination_type": "volume", "volume_id": VOL,
             "boot_index": 0}]  # fmt: skip
    bdms += [{"source_type": "blank", "destination_type": "local", "boot_index": -1}] * 4
    with pytest.raises(Invalid) as caught:
        _checker(_Volumes(_volume())).prepare(bdms, no_ephemeral, "", False)
    assert caught.value.message == (
        "Block Device Mapping is Invalid: You specified more local devices than the limit allows"
    )
