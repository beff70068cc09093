"""Handlers of ``/servers/{server_id}/os-volume_attachments``: list (``limit``/``offset``),
show, attach (the new attachment's view; 202 without a body from 2.101), update and swap
(202, 2.85 update), detach (202). The
view per microversion: ``tag`` from 2.70, ``delete_on_termination`` from 2.79,
``attachment_id`` and ``bdm_uuid`` instead of ``id`` from 2.89."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.resources.servers.create_request import as_bool
from openkeel.api.usecases.volume_attachments import (
    POLICY,
    AttachRequest,
    ServerVolumes,
    VolumeMapping,
)
from openkeel.api.usecases.volume_swap import AttachmentUpdate, VolumeUpdates

__all__ = ["POLICY", "attach", "detach", "list_attachments", "show_attachment", "update"]
MAX_LIMIT = 1000


def _view(req: ApiRequest, mapping: VolumeMapping) -> dict[str, Any]:
    newest = req.at_least("2.89")
    out: dict[str, Any] = {} if newest else {"id": mapping.volume_id}
    out["volumeId"] = mapping.volume_id
    out["serverId"] = mapping.instance_uuid
    if mapping.device_name:
        out["device"] = mapping.device_name
    if req.at_least("2.70"):
        out["tag"] = mapping.tag
    if req.at_least("2.79"):
        out["delete_on_termination"] = mapping.delete_on_termination
    if newest:
        out["attachment_id"] = mapping.attachment_id
        out["bdm_uuid"] = mapping.uuid
    return out


def _int(req: ApiRequest, name: str, default: int) -> int:
    value = req.query_value(name)
    return int(value) if value is not None else default


def list_attachments(req: ApiRequest) -> dict[str, Any]:
    mappings = ServerVolumes(req.services, req.context).list(req.params["server_id"])
    offset = _int(req, "offset", 0)
    limit = min(_int(req, "limit", MAX_LIMIT), MAX_LIMIT)
    shown = mappings[offset : offset + limit]
    if req.at_least("2.89"):
        shown = [m for m in shown if m.attachment_id is not None]
    return {"volumeAttachments": [_view(req, m) for m in shown]}


def show_attachment(req: ApiRequest) -> dict[str, Any]:
    server_id, volume_id = req.params["server_id"], req.params["id"]
    mapping = ServerVolumes(req.services, req.context).show(server_id, volume_id)
    return {"volumeAttachment": _view(req, mapping)}


def attach(req: ApiRequest) -> Reply:
    wanted: dict[str, Any] = req.body["volumeAttachment"]
    request = AttachRequest(
        volume_id=wanted["volumeId"], device=wanted.get("device"), tag=wanted.get("tag"),
        delete_on_termination=as_bool(wanted.get("delete_on_termination", False)),
        multiattach_allowed=req.at_least("2.60"),
    )  # fmt: skip
    mapping = ServerVolumes(req.services, req.context).attach(req.params["server_id"], request)
    if req.at_least("2.101"):
        return Reply(None, 202)
    return Reply({"volumeAttachment": _view(req, mapping)})


def update(req: ApiRequest) -> None:
    wanted: dict[str, Any] = req.body["volumeAttachment"]
    dot = wanted.get("delete_on_termination")
    request = AttachmentUpdate(
        volume_id=wanted["volumeId"], only_swap=not req.at_least("2.85"), id=wanted.get("id"),
        server_id=wanted.get("serverId"), device=wanted.get("device"), tag=wanted.get("tag"),
        delete_on_termination=None if dot is None else as_bool(dot), given=frozenset(wanted),
    )  # fmt: skip
    VolumeUpdates(req.services, req.context).update(req.params["server_id"], req.params["id"], request)  # fmt: skip


def detach(req: ApiRequest) -> None:
    ServerVolumes(req.services, req.context).detach(req.params["server_id"], req.params["id"])
