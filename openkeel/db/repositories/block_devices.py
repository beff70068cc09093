"""Block device mappings of instances (cell DB ``block_device_mapping``): the volumes attached
to a server, one live row per (instance, volume). Called by the volume attachments use case
and the compute host's attach, detach and delete."""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass
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
