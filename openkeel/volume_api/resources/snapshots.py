"""Snapshots: list (summary and detail), show, create, update, delete, reset status."""

from __future__ import annotations

from openkeel.volume.embedded.faults import BadRequest
from openkeel.volume_api import views
from openkeel.volume_api.request import Reply, VolumeRequest, metadata, optional_text, page
from openkeel.volume_api.routing import Endpoint, RouteTable

_FILTERS = ("name", "status", "volume_id", "project_id")


def _listing(req: VolumeRequest, detail: bool) -> Reply:
    rows = req.service.visible(req.caller, "snapshots", req.flag("all_tenants"))
    items = []
    for row in rows:
        if any(req.value(k) is not None and str(row[k]) != req.value(k) for k in _FILTERS):
            continue
        items.append(views.snapshot(req, row, detail))
    return Reply(page(req, items, "snapshots"))


def list_snapshots(req: VolumeRequest) -> Reply:
    return _listing(req, False)


def list_snapshots_detail(req: VolumeRequest) -> Reply:
    return _listing(req, True)


def show_snapshot(req: VolumeRequest) -> Reply:
    row = req.service.snapshot(req.caller, req.params["id"])
    return Reply({"snapshot": views.snapshot(req, row)})


def _force(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise BadRequest(f"Invalid input received: Invalid value '{value}' for force.")


def create_snapshot(req: VolumeRequest) -> Reply:
    ref = dict(req.element("snapshot"))
    if not ref.get("volume_id"):
        raise BadRequest("Invalid input for field/attribute volume_id. 'volume_id' is a "
                         "required property")  # fmt: skip
    ref.setdefault("name", ref.get("display_name"))
    ref.setdefault("description", ref.get("display_description"))
    for name in ("name", "description"):
        optional_text(ref, name)
    metadata(ref)
    ref["force"] = _force(ref.get("force", False))
    row = req.service.create_snapshot(req.caller, ref)
    return Reply({"snapshot": views.snapshot(req, row)}, 202)


def update_snapshot(req: VolumeRequest) -> Reply:
    ref = dict(req.element("snapshot"))
    for name in ("name", "description"):
        optional_text(ref, name)
    metadata(ref)
    row = req.service.update_snapshot(req.caller, req.params["id"], ref)
    return Reply({"snapshot": views.snapshot(req, row)})


def delete_snapshot(req: VolumeRequest) -> Reply:
    req.service.delete_snapshot(req.caller, req.params["id"])
    return Reply(None, 202)


def snapshot_action(req: VolumeRequest) -> Reply:
    document = req.document()
    ref = document.get("os-reset_status")
    if len(document) != 1 or not isinstance(ref, dict):
        raise BadRequest("There is no such action: " + ", ".join(document))
    req.service.reset_status(req.caller, "snapshots", req.params["id"], ref)
    return Reply(None, 202)


def register(table: RouteTable) -> None:
    table.add("GET", "/v3/snapshots", Endpoint(list_snapshots))
    table.add("GET", "/v3/snapshots/detail", Endpoint(list_snapshots_detail))
    table.add("POST", "/v3/snapshots", Endpoint(create_snapshot))
    table.add("GET", "/v3/snapshots/{id}", Endpoint(show_snapshot))
    table.add("PUT", "/v3/snapshots/{id}", Endpoint(update_snapshot))
    table.add("DELETE", "/v3/snapshots/{id}", Endpoint(delete_snapshot))
    table.add("POST", "/v3/snapshots/{id}/action", Endpoint(snapshot_action))
