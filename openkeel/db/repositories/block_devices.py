"""Block device mappings of instances (cell DB ``block_device_mapping``): the volumes attached
to a server, one live row per (instance, volume). Called by the volume attachments use case
and the compute host's attach, detach and delete."""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_tables
from openkeel.db.schema.columns import utcnow
from openkeel.db.softdelete import live, soft_delete

_BDM = cell_tables.block_device_mapping


@dataclass(frozen=True)
class VolumeMapping:
    """A volume mapped to an instance, as Nova's BlockDeviceMapping holds it."""

    uuid: str
    instance_uuid: str
    volume_id: str
    device_name: str | None
    boot_index: int | None
    tag: str | None
    delete_on_termination: bool
    attachment_id: str | None
    connection_info: dict[str, Any]

    @property
    def is_root(self) -> bool:
        return self.boot_index == 0


def _mapping(row: sa.Row[Any]) -> VolumeMapping:
    return VolumeMapping(
        uuid=row.uuid, instance_uuid=row.instance_uuid, volume_id=row.volume_id,
        device_name=row.device_name, boot_index=row.boot_index, tag=row.tag,
        delete_on_termination=bool(row.delete_on_termination),
        attachment_id=row.attachment_id,
        connection_info=json.loads(row.connection_info) if row.connection_info else {},
    )  # fmt: skip


def volumes_of(conn: sa.Connection, instance_uuid: str) -> list[VolumeMapping]:
    """The instance's live volume mappings, oldest first."""
    query = (
        sa.select(_BDM)
        .where(_BDM.c.instance_uuid == instance_uuid, live(_BDM), _BDM.c.volume_id.is_not(None))
        .order_by(_BDM.c.id)
    )
    return [_mapping(row) for row in conn.execute(query)]


def device_names(conn: sa.Connection, instance_uuid: str) -> set[str]:
    """Every device name the instance's live mappings hold."""
    query = sa.select(_BDM.c.device_name).where(_BDM.c.instance_uuid == instance_uuid, live(_BDM))
    return {name for name in conn.execute(query).scalars() if name}


def find(conn: sa.Connection, instance_uuid: str, volume_id: str) -> VolumeMapping | None:
    for mapping in volumes_of(conn, instance_uuid):
        if mapping.volume_id == volume_id:
            return mapping
    return None


def add_volume(
    conn: sa.Connection,
    instance_uuid: str,
    volume_id: str,
    device_name: str,
    *,
    tag: str | None = None,
    delete_on_termination: bool = False,
    attachment_id: str | None = None,
) -> VolumeMapping:
    """A new volume mapping (not bootable) of the instance."""
    now = utcnow()
    values: Mapping[str, Any] = {
        "uuid": str(uuidlib.uuid4()), "instance_uuid": instance_uuid, "volume_id": volume_id,
        "source_type": "volume", "destination_type": "volume", "device_type": "disk",
        "device_name": device_name, "boot_index": None, "tag": tag,
        "delete_on_termination": delete_on_termination, "attachment_id": attachment_id,
        "created_at": now, "updated_at": now, "deleted": 0,
    }  # fmt: skip
    conn.execute(_BDM.insert().values(**values))
    found = find(conn, instance_uuid, volume_id)
    assert found is not None
    return found


def set_connection(conn: sa.Connection, bdm_uuid: str, connection_info: Mapping[str, Any]) -> None:
    conn.execute(
        _BDM.update()
        .where(_BDM.c.uuid == bdm_uuid, live(_BDM))
        .values(connection_info=json.dumps(dict(connection_info)), updated_at=utcnow())
    )


def remove(conn: sa.Connection, bdm_uuid: str) -> bool:
    """Soft-delete the mapping; False when it was gone already."""
    return soft_delete(conn, _BDM, _BDM.c.uuid == bdm_uuid) > 0


def swapped(
    conn: sa.Connection,
    bdm_uuid: str,
    volume_id: str,
    attachment_id: str | None,
    connection_info: Mapping[str, Any],
    volume_size: int | None,
) -> None:
    """The mapping after a swap (Nova's swap_volume): it names ``volume_id`` through the new
    attachment and connection (and the new size when the volume grew)."""
    values: dict[str, Any] = {
        "volume_id": volume_id, "attachment_id": attachment_id, "source_type": "volume",
        "destination_type": "volume", "snapshot_id": None, "no_device": None,
        "connection_info": json.dumps(dict(connection_info)), "updated_at": utcnow(),
    }  # fmt: skip
    if volume_size is not None:
        values["volume_size"] = volume_size
    conn.execute(_BDM.update().where(_BDM.c.uuid == bdm_uuid, live(_BDM)).values(**values))


def set_size(conn: sa.Connection, bdm_uuid: str, volume_size: int) -> None:
    """The mapping's volume grew (the ``volume-extended`` event)."""
    conn.execute(
        _BDM.update()
        .where(_BDM.c.uuid == bdm_uuid, live(_BDM))
        .values(volume_size=volume_size, updated_at=utcnow())
    )


def update_delete_on_termination(conn: sa.Connection, bdm_uuid: str, value: bool) -> None:
    """PUT os-volume_attachments (2.85): the one property a user may change."""
    conn.execute(
        _BDM.update()
        .where(_BDM.c.uuid == bdm_uuid, live(_BDM))
        .values(delete_on_termination=value, updated_at=utcnow())
    )


def of_volume(conn: sa.Connection, volume_id: str) -> list[VolumeMapping]:
    """The live mappings of ``volume_id`` in this cell (more than one: multiattach)."""
    query = sa.select(_BDM).where(_BDM.c.volume_id == volume_id, live(_BDM)).order_by(_BDM.c.id)
    return [_mapping(row) for row in conn.execute(query)]


# -- the mappings a server was created with (boot from volume) ------------------------------

_REQUESTED_FIELDS = (
    "source_type", "destination_type", "guest_format", "device_type", "disk_bus", "boot_index",
    "device_name", "delete_on_termination", "snapshot_id", "volume_id", "volume_size",
    "volume_type", "image_id", "tag", "attachment_id",
)  # fmt: skip


@dataclass(frozen=True)
class DeviceMapping:
    """Any mapping of an instance (local or volume), as ``POST /servers`` asked for it; a
    volume to create has no ``volume_id`` until compute made it."""

    uuid: str
    source_type: str
    destination_type: str
    boot_index: int | None
    device_name: str | None = None
    volume_id: str | None = None
    snapshot_id: str | None = None
    image_id: str | None = None
    volume_size: int | None = None
    volume_type: str | None = None
    delete_on_termination: bool = False
    attachment_id: str | None = None
    guest_format: str | None = None
    device_type: str | None = None
    disk_bus: str | None = None
    tag: str | None = None
    connection_info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_volume(self) -> bool:
        return self.destination_type == "volume"


def add_requested(
    conn: sa.Connection, instance_uuid: str, mappings: list[Mapping[str, Any]] | tuple[Any, ...]
) -> None:
    """The mappings of a server being created (the conductor, with its cell row)."""
    now = utcnow()
    rows = []
    for mapping in mappings:
        values = {k: mapping.get(k) for k in _REQUESTED_FIELDS}
        boot_index = values["boot_index"]
        values.update(
            uuid=str(uuidlib.uuid4()), instance_uuid=instance_uuid,
            boot_index=None if boot_index is None else int(boot_index),
            delete_on_termination=bool(values["delete_on_termination"]),
            no_device=False, created_at=now, updated_at=now, deleted=0,
        )  # fmt: skip
        rows.append(values)
    if rows:
        conn.execute(_BDM.insert(), rows)


def devices_of(conn: sa.Connection, instance_uuid: str) -> list[DeviceMapping]:
    """Every live mapping of the instance, oldest first."""
    query = (
        sa.select(_BDM).where(_BDM.c.instance_uuid == instance_uuid, live(_BDM)).order_by(_BDM.c.id)
    )
    return [_device(row) for row in conn.execute(query)]


def _device(row: sa.Row[Any]) -> DeviceMapping:
    return DeviceMapping(
        uuid=row.uuid, source_type=row.source_type or "", boot_index=row.boot_index,
        destination_type=row.destination_type or "", device_name=row.device_name,
        volume_id=row.volume_id, snapshot_id=row.snapshot_id, image_id=row.image_id,
        volume_size=row.volume_size, volume_type=row.volume_type,
        delete_on_termination=bool(row.delete_on_termination),
        attachment_id=row.attachment_id, guest_format=row.guest_format,
        device_type=row.device_type, disk_bus=row.disk_bus, tag=row.tag,
        connection_info=json.loads(row.connection_info) if row.connection_info else {},
    )  # fmt: skip


def set_fields(conn: sa.Connection, bdm_uuid: str, **values: Any) -> None:
    """Record what compute made of a mapping: ``volume_id``, ``attachment_id``,
    ``device_name``."""
    allowed = {"volume_id", "attachment_id", "device_name"}
    assert set(values) <= allowed, values
    conn.execute(
        _BDM.update()
        .where(_BDM.c.uuid == bdm_uuid, live(_BDM))
        .values(**values, updated_at=utcnow())
    )
