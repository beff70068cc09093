"""Attachments (3.27+; complete 3.44+): create, update with a connector, complete, delete,
list and show. Below their microversion the routes answer 404 as Cinder's do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openkeel.volume.embedded.faults import BadRequest, NotFound
from openkeel.volume_api import views
from openkeel.volume_api.request import Reply, VolumeRequest, page
from openkeel.volume_api.routing import Endpoint, RouteTable

Handler = Callable[[VolumeRequest], Reply]


def since(minor: int, handler: Handler) -> Handler:
    def versioned(req: VolumeRequest) -> Reply:
        if not req.at_least(3, minor):
            raise NotFound(f"API version {req.version[0]}.{req.version[1]} is not supported on "
                           "this method.")  # fmt: skip
        return handler(req)

    return versioned


def _listing(req: VolumeRequest, detail: bool) -> Reply:
    rows = req.service.visible(req.caller, "attachments", req.flag("all_tenants"))
    wanted = {k: req.value(k) for k in ("volume_id", "instance_id", "status")}
    items = []
    for row in rows:
        view = views.attachment(req, row, detail)
        view["created_at"] = row["created_at"]
        if wanted["volume_id"] and row["volume_id"] != wanted["volume_id"]:
            continue
        if wanted["instance_id"] and row["instance_uuid"] != wanted["instance_id"]:
            continue
        if wanted["status"] and row["status"] != wanted["status"]:
            continue
        items.append(view)
    body = page(req, items, "attachments")
    for item in body["attachments"]:
        item.pop("created_at")
    return Reply(body)


def list_attachments(req: VolumeRequest) -> Reply:
    return _listing(req, False)


def list_attachments_detail(req: VolumeRequest) -> Reply:
    return _listing(req, True)


def show_attachment(req: VolumeRequest) -> Reply:
    row = req.service.attachment(req.caller, req.params["id"])
    return Reply({"attachment": views.attachment(req, row)})


def _connector(ref: dict[str, Any], required: bool) -> dict[str, Any] | None:
    connector = ref.get("connector")
    if connector is None and not required:
        return None
    if not isinstance(connector, dict):
        raise BadRequest("Invalid input for field/attribute connector. Value: "
                         f"{connector}. {connector!r} is not of type 'object'")  # fmt: skip
    return connector


def create_attachment(req: VolumeRequest) -> Reply:
    ref = req.element("attachment")
    volume_id = ref.get("volume_uuid")
    if not isinstance(volume_id, str):
        raise BadRequest("Invalid input for field/attribute volume_uuid. 'volume_uuid' is a "
                         "required property")  # fmt: skip
    mode = ref.get("mode", "rw") if req.at_least(3, 54) else "rw"
    if mode not in ("rw", "ro"):
        raise BadRequest(f"Invalid input received: Invalid attachment mode '{mode}'.")
    row = req.service.create_attachment(
        req.caller, volume_id, ref.get("instance_uuid"), _connector(ref, False), mode
    )
    return Reply({"attachment": views.attachment(req, row)})


def update_attachment(req: VolumeRequest) -> Reply:
    ref = req.element("attachment")
    connector = _connector(ref, True)
    assert connector is not None
    row = req.service.update_attachment(req.caller, req.params["id"], connector)
    return Reply({"attachment": views.attachment(req, row)})


def delete_attachment(req: VolumeRequest) -> Reply:
    row = req.service.attachment(req.caller, req.params["id"])
    req.service.delete_attachment(req.caller, row["id"])
    left = req.service.attachments_of(row["volume_id"])
    return Reply({"attachments": [views.attachment(req, a, False) for a in left]})


def attachment_action(req: VolumeRequest) -> Reply:
    document = req.document()
    if list(document) != ["os-complete"]:
        raise BadRequest("There is no such action: " + ", ".join(document))
    req.service.complete_attachment(req.caller, req.params["id"])
    return Reply(None, 204)


def register(table: RouteTable) -> None:
    table.add("GET", "/v3/attachments", Endpoint(since(27, list_attachments)))
    table.add("GET", "/v3/attachments/detail", Endpoint(since(27, list_attachments_detail)))
    table.add("POST", "/v3/attachments", Endpoint(since(27, create_attachment)))
    table.add("GET", "/v3/attachments/{id}", Endpoint(since(27, show_attachment)))
    table.add("PUT", "/v3/attachments/{id}", Endpoint(since(27, update_attachment)))
    table.add("DELETE", "/v3/attachments/{id}", Endpoint(since(27, delete_attachment)))
    table.add("POST", "/v3/attachments/{id}/action", Endpoint(since(44, attachment_action)))
