"""Volume types (``/types``: list, show, ``default``, create, update, delete) and their extra
specs (``/types/{id}/extra_specs``), as Cinder 29 answers them (decision 0075)."""

from __future__ import annotations

import re
from typing import Any

from openkeel.volume.embedded.faults import BadRequest
from openkeel.volume.embedded.service import Row
from openkeel.volume_api.request import Reply, VolumeRequest, optional_text
from openkeel.volume_api.routing import Endpoint, RouteTable

_SPEC_KEY = re.compile(r"^[a-zA-Z0-9\-_:. /]{1,255}$")
_PUBLIC = "os-volume-type-access:is_public"


def view(req: VolumeRequest, row: Row, *, access: bool = True, qos: bool = True) -> dict[str, Any]:
    """One type; ``access``: with the type-access extension's attribute, ``qos``: with the QoS
    id shown to administrators (Cinder's views differ per call: create and update answer
    without the id, update and ``default`` without the attribute)."""
    out: dict[str, Any] = {
        "id": row["id"], "name": row["name"], "is_public": row["is_public"],
        "description": row["description"], "extra_specs": row["extra_specs"],
    }  # fmt: skip
    if qos and req.caller.is_admin:
        out["qos_specs_id"] = None
    if access:
        out[_PUBLIC] = row["is_public"]
    return out


def _admin(req: VolumeRequest) -> bool:
    return req.caller.is_admin


def list_types(req: VolumeRequest) -> Reply:
    rows = req.service.types.visible(_admin(req))
    wanted = req.value("is_public")  # Cinder's _parse_is_public: "None" lists every type
    if wanted is not None and wanted.lower() != "none" and _admin(req):
        public = _boolean("is_public", wanted)
        rows = [r for r in rows if r["is_public"] == public]
    return Reply({"volume_types": [view(req, r) for r in rows]})


def show_type(req: VolumeRequest) -> Reply:
    ident = req.params["id"]
    row = req.service.types.get(ident, _admin(req))
    return Reply({"volume_type": view(req, row, access=ident != "default", qos=False)})


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise BadRequest(f"Invalid input for field/attribute {name}. Value: {value}. "
                     f"{value!r} is not a valid boolean")  # fmt: skip


def _specs(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _SPEC_KEY.match(k) and isinstance(v, str) and len(v) <= 255
        for k, v in value.items()
    ):
        raise BadRequest(f"Invalid input for field/attribute extra_specs. Value: {value}. "
                         "Keys must match [a-zA-Z0-9-_:. /]{1,255}, values be strings of at "
                         "most 255 characters")  # fmt: skip
    return dict(value)


def _check_fields(ref: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(ref) - allowed)
    if unknown:
        raise BadRequest("Additional properties are not allowed (" + ", ".join(
            repr(u) for u in unknown) + " was unexpected)")  # fmt: skip


def create_type(req: VolumeRequest) -> Reply:
    ref = dict(req.element("volume_type"))
    _check_fields(ref, {"name", "description", _PUBLIC, "extra_specs"})
    if not isinstance(ref.get("name"), str):
        raise BadRequest("Invalid input for field/attribute name. Value: None. 'name' is a "
                         "required property")  # fmt: skip
    optional_text(ref, "name")
    optional_text(ref, "description")
    wanted = {"name": ref["name"], "description": ref.get("description"),
              "is_public": _boolean(_PUBLIC, ref.get(_PUBLIC, True)),
              "extra_specs": _specs(ref.get("extra_specs") or {})}  # fmt: skip
    row = req.service.types.create(_admin(req), wanted)
    return Reply({"volume_type": view(req, row, qos=False)})


def update_type(req: VolumeRequest) -> Reply:
    ref = dict(req.element("volume_type"))
    _check_fields(ref, {"name", "description", "is_public"})
    optional_text(ref, "name")
    optional_text(ref, "description")
    if ref.get("is_public") is not None:
        ref["is_public"] = _boolean("is_public", ref["is_public"])
    row = req.service.types.update(_admin(req), req.params["id"], ref)
    return Reply({"volume_type": view(req, row, access=False, qos=False)})


def delete_type(req: VolumeRequest) -> Reply:
    req.service.types.delete(_admin(req), req.params["id"])
    return Reply(None, 202)


def list_specs(req: VolumeRequest) -> Reply:
    return Reply({"extra_specs": req.service.types.specs(_admin(req), req.params["id"])})


def create_specs(req: VolumeRequest) -> Reply:
    document = req.document()
    _check_fields(document, {"extra_specs"})
    if "extra_specs" not in document:
        raise BadRequest("Invalid input for field/attribute extra_specs. 'extra_specs' is a "
                         "required property")  # fmt: skip
    specs = _specs(document["extra_specs"])
    req.service.types.set_specs(_admin(req), req.params["id"], specs, "create")
    return Reply({"extra_specs": specs})


def show_spec(req: VolumeRequest) -> Reply:
    key = req.params["key"]
    return Reply({key: req.service.types.spec(_admin(req), req.params["id"], key)})


def update_spec(req: VolumeRequest) -> Reply:
    document = req.document()
    key = req.params["key"]
    if key not in document:
        raise BadRequest("Request body and URI mismatch")
    specs = _specs(document)
    req.service.types.set_specs(_admin(req), req.params["id"], specs, "update")
    return Reply(specs)


def delete_spec(req: VolumeRequest) -> Reply:
    req.service.types.delete_spec(_admin(req), req.params["id"], req.params["key"])
    return Reply(None, 202)


_ROUTES = (
    ("", {"GET": list_types, "POST": create_type}),
    ("/{id}", {"GET": show_type, "PUT": update_type, "DELETE": delete_type}),
    ("/{id}/extra_specs", {"GET": list_specs, "POST": create_specs}),
    ("/{id}/extra_specs/{key}", {"GET": show_spec, "PUT": update_spec, "DELETE": delete_spec}),
)


def register(table: RouteTable) -> None:
    for path, verbs in _ROUTES:
        for method, handler in verbs.items():
            table.add(method, "/v3/types" + path, Endpoint(handler))
