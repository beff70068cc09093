"""Volumes: list (summary and detail, Cinder's filters, ``limit``/``marker``, ``sort``), show,
create, update, delete, and the volume actions (extend, bootable, reset status, the attach
steps before the attachments API, and 3.68's reimage)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from openkeel.volume.embedded.faults import BadRequest, NotFound, volume_not_found
from openkeel.volume.embedded.service import Row
from openkeel.volume_api import views
from openkeel.volume_api.request import (
    Reply,
    VolumeRequest,
    integer,
    metadata,
    optional_text,
    page,
)
from openkeel.volume_api.routing import Endpoint, RouteTable

_CONTROL = {"limit", "marker", "sort", "sort_key", "sort_dir", "all_tenants", "with_count",
            "offset", "is_public", "usage"}  # fmt: skip
_CREATE = {"size", "name", "description", "imageRef", "snapshot_id", "source_volid",
           "volume_type", "metadata", "availability_zone", "multiattach", "backup_id",
           "consistencygroup_id", "display_name", "display_description", "group_id",
           "source_replica", "scheduler_hints"}  # fmt: skip


def _matches(req: VolumeRequest, row: Row, view: dict[str, Any]) -> bool:
    for key, value in req.query:
        if key in _CONTROL:
            continue
        if key == "metadata":
            wanted = _literal(value)
            if not isinstance(wanted, dict) or any(
                row["metadata"].get(k) != v for k, v in wanted.items()
            ):
                return False
        elif key.endswith("~"):
            if value.lower() not in str(view.get(key[:-1]) or "").lower():
                return False
        elif key == "bootable":
            if view["bootable"] != ("true" if value.lower() in ("1", "true") else "false"):
                return False
        elif key in ("project_id", "tenant_id"):
            if row["project_id"] != value:
                return False
        elif key in view and str(view[key]) != value:
            return False
    return True


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _listing(req: VolumeRequest, detail: bool) -> Reply:
    rows = req.service.visible(req.caller, "volumes", req.flag("all_tenants"))
    items = []
    for row in rows:
        view = views.volume(req, row)
        if _matches(req, row, view):
            items.append(view)
    body = page(req, items, "volumes")
    if not detail:
        body["volumes"] = [{k: v[k] for k in ("id", "name", "links")} for v in body["volumes"]]
    if req.at_least(3, 45) and req.flag("with_count"):
        body["count"] = len(items)
    return Reply(body)


def list_volumes(req: VolumeRequest) -> Reply:
    return _listing(req, False)


def list_volumes_detail(req: VolumeRequest) -> Reply:
    return _listing(req, True)


def show_volume(req: VolumeRequest) -> Reply:
    return Reply({"volume": views.volume(req, req.service.volume(req.caller, req.params["id"]))})


def create_volume(req: VolumeRequest) -> Reply:
    ref = dict(req.element("volume"))
    unknown = sorted(set(ref) - _CREATE)
    if unknown:
        raise BadRequest("Additional properties are not allowed (" + ", ".join(
            repr(u) for u in unknown) + " was unexpected)")  # fmt: skip
    if ref.pop("multiattach", False):
        # Cinder 29: multiattach comes from the volume type only.
        raise BadRequest("multiattach parameter has been removed. The default behavior is to "
                         "use multiattach enabled volume types. Contact your administrator to "
                         "create a multiattach enabled volume type and use it to create "
                         "multiattach volumes.")  # fmt: skip
    ref.setdefault("name", ref.get("display_name"))
    ref.setdefault("description", ref.get("display_description"))
    for name in ("name", "description", "availability_zone", "volume_type"):
        optional_text(ref, name)
    metadata(ref)
    if ref.get("size") is not None:
        ref["size"] = integer("size", ref["size"])
    row = req.service.create_volume(req.caller, ref)
    return Reply({"volume": views.volume(req, row, extended=False)}, 202)


def update_volume(req: VolumeRequest) -> Reply:
    ref = dict(req.element("volume"))
    if "display_name" in ref:
        ref.setdefault("name", ref.pop("display_name"))
    if "display_description" in ref:
        ref.setdefault("description", ref.pop("display_description"))
    if not set(ref) & {"name", "description", "metadata"}:
        raise BadRequest("Invalid input received: At least one of name, description or "
                         "metadata must be given.")  # fmt: skip
    for name in ("name", "description"):
        optional_text(ref, name)
    metadata(ref)
    row = req.service.update_volume(req.caller, req.params["id"], ref)
    return Reply({"volume": views.volume(req, row, extended=False)})


def delete_volume(req: VolumeRequest) -> Reply:
    req.service.delete_volume(req.caller, req.params["id"], req.flag("cascade"))
    return Reply(None, 202)


def _extend(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    if not isinstance(ref, dict) or "new_size" not in ref:
        raise BadRequest("Invalid input for field/attribute os-extend. 'new_size' is a required "
                         "property")  # fmt: skip
    new_size = integer("new_size", ref["new_size"])
    req.service.extend(req.caller, ident, new_size, in_use=req.at_least(3, 42))
    return Reply(None, 202)


def _bootable(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    value = ref.get("bootable") if isinstance(ref, dict) else None
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        value = value.lower() in ("true", "1")
    if not isinstance(value, bool):
        raise BadRequest("Invalid input received: Bootable must be a boolean.")
    req.service.set_bootable(req.caller, ident, value)
    return Reply(None, 200)


def _connection(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    connector = ref.get("connector") if isinstance(ref, dict) else None
    if not isinstance(connector, dict):
        raise BadRequest("Must specify 'connector'")
    req.service.volume(req.caller, ident)
    info = {"driver_volume_type": "local",
            "data": {"device_path": str(req.service.files.path(ident)), "volume_id": ident,
                     "access_mode": "rw"}}  # fmt: skip
    return Reply({"connection_info": info}, 200)


def _simple(step: Callable[..., None]) -> Callable[[VolumeRequest, str, Any], Reply]:
    def act(req: VolumeRequest, ident: str, ref: Any) -> Reply:
        step(req.service, req.caller, ident)
        return Reply(None, 202)

    return act


def _attach(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    if not isinstance(ref, dict) or not ref.get("mountpoint"):
        raise BadRequest("Invalid input for field/attribute os-attach.")
    req.service.attach(req.caller, ident, ref)
    return Reply(None, 202)


def _detach(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    attachment = ref.get("attachment_id") if isinstance(ref, dict) else None
    req.service.detach(req.caller, ident, attachment)
    return Reply(None, 202)


def _reset(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    req.service.reset_status(req.caller, "volumes", ident, ref if isinstance(ref, dict) else {})
    return Reply(None, 202)


def _force_delete(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    req.service.reset_status(req.caller, "volumes", ident, {"status": "error",
                                                            "attach_status": "detached"})  # fmt: skip
    req.service.delete_volume(req.caller, ident, cascade=True)
    return Reply(None, 202)


_UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


def _reimage(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    """3.68 ``{"os-reimage": {"image_id", "reimage_reserved"}}`` (Cinder's schema)."""
    if not req.at_least(3, 68):  # Cinder 29's answer: the action does not exist before 3.68
        raise NotFound("The resource could not be found.")
    if not isinstance(ref, dict) or "image_id" not in ref:
        raise BadRequest("Invalid input for field/attribute os-reimage. Value: "
                         f"{ref}. 'image_id' is a required property")  # fmt: skip
    unknown = sorted(set(ref) - {"image_id", "reimage_reserved"})
    if unknown:
        raise BadRequest(f"Invalid input for field/attribute os-reimage. Value: {ref}. "
                         "Additional properties are not allowed (" + ", ".join(
                             repr(u) for u in unknown) + " was unexpected)")  # fmt: skip
    image_id = ref["image_id"]
    if not isinstance(image_id, str) or not _UUID.match(image_id):
        raise BadRequest(f"Invalid input for field/attribute image_id. Value: {image_id}. "
                         f"{image_id!r} is not a 'uuid'")  # fmt: skip
    reserved = ref.get("reimage_reserved", False)
    if isinstance(reserved, str) and reserved.lower() in _BOOLEANS:
        reserved = _BOOLEANS[reserved.lower()]
    if not isinstance(reserved, bool):
        raise BadRequest(f"Invalid input for field/attribute reimage_reserved. Value: "
                         f"{reserved}.")  # fmt: skip
    req.service.reimage(req.caller, ident, image_id, reserved)
    return Reply(None, 202)


_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "y": True, "t": True,
             "false": False, "0": False, "no": False, "off": False, "n": False, "f": False}  # fmt: skip


def _ignored(req: VolumeRequest, ident: str, ref: Any) -> Reply:
    req.service.volume(req.caller, ident)
    return Reply(None, 202)


ACTIONS: dict[str, Callable[[VolumeRequest, str, Any], Reply]] = {
    "os-extend": _extend,
    "os-set_bootable": _bootable,
    "os-reset_status": _reset,
    "os-force_delete": _force_delete,
    "os-reserve": _simple(lambda s, c, i: s.reserve(c, i)),
    "os-unreserve": _simple(lambda s, c, i: s.unreserve(c, i)),
    "os-begin_detaching": _simple(lambda s, c, i: s.begin_detaching(c, i)),
    "os-roll_detaching": _simple(lambda s, c, i: s.roll_detaching(c, i)),
    "os-attach": _attach,
    "os-detach": _detach,
    "os-initialize_connection": _connection,
    "os-reimage": _reimage,
    "os-terminate_connection": _ignored,
    "os-update_readonly_flag": _ignored,
}


def volume_action(req: VolumeRequest) -> Reply:
    document = req.document()
    if len(document) != 1 or next(iter(document)) not in ACTIONS:
        raise BadRequest("There is no such action: " + ", ".join(document))
    [(name, ref)] = document.items()
    ident = req.params["id"]
    if req.service.store.get("volumes", ident) is None:
        raise volume_not_found(ident)
    return ACTIONS[name](req, ident, ref)


def register(table: RouteTable) -> None:
    table.add("GET", "/v3/volumes", Endpoint(list_volumes))
    table.add("GET", "/v3/volumes/detail", Endpoint(list_volumes_detail))
    table.add("POST", "/v3/volumes", Endpoint(create_volume))
    table.add("GET", "/v3/volumes/{id}", Endpoint(show_volume))
    table.add("PUT", "/v3/volumes/{id}", Endpoint(update_volume))
    table.add("DELETE", "/v3/volumes/{id}", Endpoint(delete_volume))
    table.add("POST", "/v3/volumes/{id}/action", Endpoint(volume_action))
