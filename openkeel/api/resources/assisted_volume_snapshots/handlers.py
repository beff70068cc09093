"""Handlers of ``/os-assisted-volume-snapshots``: create (the snapshot's ``id`` and
``volumeId``), delete (204; ``delete_info`` names the volume)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.assisted_snapshots import AssistedSnapshots


def create_snapshot(req: ApiRequest) -> dict[str, Any]:
    snapshot: dict[str, Any] = req.body["snapshot"]
    create_info: dict[str, Any] = snapshot["create_info"]
    AssistedSnapshots(req.services, req.context).create(snapshot["volume_id"], create_info)
    return {"snapshot": {"id": create_info.get("id"), "volumeId": snapshot["volume_id"]}}


def delete_snapshot(req: ApiRequest) -> None:
    snapshots = AssistedSnapshots(req.services, req.context)
    snapshots.delete(req.params["id"], req.query_value("delete_info"))
