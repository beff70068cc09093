"""Handlers of the ``os-volumes`` proxy: Nova's camelCase view of Cinder's volumes (one
attachment shown, ``[{}]`` when none), ``limit``/``offset`` paging."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.usecases.volumes import POLICY, VolumeProxy
from openkeel.volume.adapter import NewVolume, VolumeInfo

__all__ = ["POLICY", "create_volume", "delete_volume", "limited", "list_volumes", "show_volume"]
T = TypeVar("T")
MAX_LIMIT = 1000


def limited(req: ApiRequest, items: Sequence[T]) -> list[T]:
    """Nova's ``common.limited``: ``offset`` then at most ``limit`` (and 1000)."""
    offset = int(req.query_value("offset") or 0)
    limit = min(int(req.query_value("limit") or MAX_LIMIT), MAX_LIMIT)
    return list(items[offset : offset + limit])


def view(volume: VolumeInfo) -> dict[str, Any]:
    attachment: dict[str, Any] = {}
    if volume.attachments:
        first = volume.attachments[0]
        attachment = {"id": volume.id, "volumeId": volume.id, "serverId": first.server_id}
        if first.device:
            attachment["device"] = first.device
    return {
        "id": volume.id, "status": volume.status, "size": volume.size,
        "availabilityZone": volume.availability_zone, "createdAt": volume.created_at,
        "attachments": [attachment], "displayName": volume.name,
        "displayDescription": volume.description, "volumeType": volume.volume_type,
        "snapshotId": volume.snapshot_id, "metadata": dict(volume.metadata),
    }  # fmt: skip


def list_volumes(req: ApiRequest) -> dict[str, Any]:
    found = VolumeProxy(req.services, req.context).list_volumes("list")
    return {"volumes": [view(v) for v in limited(req, found)]}


def list_volumes_detail(req: ApiRequest) -> dict[str, Any]:
    found = VolumeProxy(req.services, req.context).list_volumes("detail")
    return {"volumes": [view(v) for v in limited(req, found)]}


def show_volume(req: ApiRequest) -> dict[str, Any]:
    return {"volume": view(VolumeProxy(req.services, req.context).show_volume(req.params["id"]))}


def create_volume(req: ApiRequest) -> Reply:
    wanted: dict[str, Any] = req.body["volume"]
    new = NewVolume(
        size=int(wanted["size"]), name=wanted.get("display_name"),
        description=wanted.get("display_description"), snapshot_id=wanted.get("snapshot_id"),
        volume_type=wanted.get("volume_type"), metadata=wanted.get("metadata"),
        availability_zone=wanted.get("availability_zone"),
    )  # fmt: skip
    made = VolumeProxy(req.services, req.context).create_volume(new)
    return Reply(
        {"volume": view(made)}, headers=[("Location", req.self_link("os-volumes", made.id))]
    )


def delete_volume(req: ApiRequest) -> None:
    VolumeProxy(req.services, req.context).delete_volume(req.params["id"])
