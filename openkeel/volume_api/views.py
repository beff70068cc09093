"""Cinder v3's documents of volumes, snapshots and attachments, per microversion (fields
appear at the version Cinder added them). Volume types: resources/types.py."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.volume.embedded.service import Row, VolumeService
from openkeel.volume_api.request import VolumeRequest


def stamp(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds")


def links(req: VolumeRequest, collection: str, ident: str) -> list[dict[str, str]]:
    return [
        {"href": f"{req.base}/v3/{collection}/{ident}", "rel": "self"},
        {"href": f"{req.base}/{collection}/{ident}", "rel": "bookmark"},
    ]


def volume_summary(req: VolumeRequest, row: Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "links": links(req, "volumes", row["id"])}


def volume(req: VolumeRequest, row: Row, extended: bool = True) -> dict[str, Any]:
    """One volume. ``extended``: with what Cinder's API extensions add to show and list
    (tenant, host and migration attributes, image metadata); create and update answer
    without."""
    service: VolumeService = req.service
    attachments = [
        {"id": row["id"], "attachment_id": a["id"], "volume_id": row["id"],
         "server_id": a["instance_uuid"], "host_name": a["host_name"],
         "device": a["mountpoint"], "attached_at": stamp(a["attached_at"])}
        for a in service.attachments_of(row["id"]) if a["status"] == "attached"
    ]  # fmt: skip
    out: dict[str, Any] = {
        "id": row["id"], "status": row["status"], "size": row["size"],
        "availability_zone": row["availability_zone"], "created_at": stamp(row["created_at"]),
        "updated_at": stamp(row["updated_at"]), "name": row["name"],
        "description": row["description"],
        "volume_type": service.types.name_of(row["volume_type_id"]),
        "snapshot_id": row["snapshot_id"], "source_volid": row["source_volid"],
        "metadata": row["metadata"], "links": links(req, "volumes", row["id"]),
        "user_id": row["user_id"], "bootable": "true" if row["bootable"] else "false",
        "encrypted": False, "replication_status": None, "consistencygroup_id": None,
        "multiattach": row["multiattach"], "attachments": attachments,
        "migration_status": row["migration_status"],
    }  # fmt: skip
    if extended:
        out["os-vol-tenant-attr:tenant_id"] = row["project_id"]
    if extended and row["image_metadata"]:
        out["volume_image_metadata"] = row["image_metadata"]
    if extended and req.caller.is_admin:
        out["os-vol-host-attr:host"] = service.host
        out["os-vol-mig-status-attr:migstat"] = row["migration_status"]
        out["os-vol-mig-status-attr:name_id"] = None
    if req.at_least(3, 13):
        out["group_id"] = None
    if req.at_least(3, 21) and req.caller.is_admin:
        out["provider_id"] = None
    if req.at_least(3, 48):
        out["service_uuid"] = None
        out["shared_targets"] = None if req.at_least(3, 69) else False
    if req.at_least(3, 61) and req.caller.is_admin:
        out["cluster_name"] = None
    if req.at_least(3, 63):
        out["volume_type_id"] = row["volume_type_id"]
    if req.at_least(3, 64):
        out["encryption_key_id"] = None
    if req.at_least(3, 65):
        out["consumes_quota"] = True
    return out


def snapshot(req: VolumeRequest, row: Row, detail: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row["id"], "created_at": stamp(row["created_at"]),
        "updated_at": stamp(row["updated_at"]), "name": row["name"],
        "description": row["description"], "volume_id": row["volume_id"],
        "status": row["status"], "size": row["size"], "metadata": row["metadata"],
    }  # fmt: skip
    if detail:
        out["os-extended-snapshot-attributes:progress"] = (
            "100%" if row["status"] == "available" else "0%"
        )
        out["os-extended-snapshot-attributes:project_id"] = row["project_id"]
    if req.at_least(3, 14):
        out["group_snapshot_id"] = None
    if req.at_least(3, 41):
        out["user_id"] = row["user_id"]
    if req.at_least(3, 65):
        out["consumes_quota"] = True
    return out


def attachment(req: VolumeRequest, row: Row, detail: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row["id"], "status": row["status"], "instance": row["instance_uuid"],
        "volume_id": row["volume_id"],
    }  # fmt: skip
    if detail:
        out.update({
            "attached_at": stamp(row["attached_at"]), "detached_at": stamp(row["detached_at"]),
            "attach_mode": row["attach_mode"],
            "connection_info": req.service.connection_info(row) or {},
        })  # fmt: skip
    return out
