"""Handlers of the ``os-snapshots`` proxy: Nova's camelCase view of Cinder's snapshots."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers.create_request import as_bool
from openkeel.api.resources.volumes.handlers import limited
from openkeel.api.usecases.volumes import POLICY, VolumeProxy
from openkeel.volume.adapter import SnapshotInfo

__all__ = ["POLICY", "create_snapshot", "delete_snapshot", "list_snapshots", "show_snapshot"]


def view(snapshot: SnapshotInfo) -> dict[str, Any]:
    return {
        "id": snapshot.id, "volumeId": snapshot.volume_id, "status": snapshot.status,
        "size": snapshot.size, "createdAt": snapshot.created_at,
        "displayName": snapshot.name, "displayDescription": snapshot.description,
    }  # fmt: skip


def list_snapshots(req: ApiRequest) -> dict[str, Any]:
    found = VolumeProxy(req.services, req.context).list_snapshots("list")
    return {"snapshots": [view(s) for s in limited(req, found)]}


def list_snapshots_detail(req: ApiRequest) -> dict[str, Any]:
    found = VolumeProxy(req.services, req.context).list_snapshots("detail")
    return {"snapshots": [view(s) for s in limited(req, found)]}


def show_snapshot(req: ApiRequest) -> dict[str, Any]:
    found = VolumeProxy(req.services, req.context).show_snapshot(req.params["id"])
    return {"snapshot": view(found)}


def create_snapshot(req: ApiRequest) -> dict[str, Any]:
    wanted: dict[str, Any] = req.body["snapshot"]
    made = VolumeProxy(req.services, req.context).create_snapshot(
        wanted["volume_id"], wanted.get("display_name"), wanted.get("display_description"),
        as_bool(wanted.get("force", False)),
    )  # fmt: skip
    return {"snapshot": view(made)}


def delete_snapshot(req: ApiRequest) -> None:
    VolumeProxy(req.services, req.context).delete_snapshot(req.params["id"])
