"""The metadata of volumes and snapshots: show, merge (POST), replace (PUT), one key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openkeel.volume.embedded.faults import BadRequest, NotFound
from openkeel.volume.embedded.service import Row
from openkeel.volume_api.request import Reply, VolumeRequest, metadata
from openkeel.volume_api.routing import Endpoint, RouteTable

Handler = Callable[[VolumeRequest], Reply]


def _owner(req: VolumeRequest, kind: str) -> Row:
    ident = req.params["id"]
    if kind == "volumes":
        return req.service.volume(req.caller, ident)
    return req.service.snapshot(req.caller, ident)


def _save(req: VolumeRequest, kind: str, values: dict[str, str]) -> dict[str, str]:
    row = req.service.store.update(kind, req.params["id"], {"metadata": values})
    if row is None:
        raise NotFound(f"{kind[:-1].capitalize()} {req.params['id']} could not be found.")
    return dict(row["metadata"])


def _document(req: VolumeRequest, key: str) -> dict[str, Any]:
    document = req.document()
    if key not in document:
        raise BadRequest("Malformed request body")
    metadata(document, key)
    return dict(document[key])


def handlers(kind: str) -> dict[str, Handler]:
    def show(req: VolumeRequest) -> Reply:
        return Reply({"metadata": _owner(req, kind)["metadata"]})

    def merge(req: VolumeRequest) -> Reply:
        current = _owner(req, kind)["metadata"]
        return Reply({"metadata": _save(req, kind, {**current, **_document(req, "metadata")})})

    def replace(req: VolumeRequest) -> Reply:
        _owner(req, kind)
        return Reply({"metadata": _save(req, kind, _document(req, "metadata"))})

    def show_key(req: VolumeRequest) -> Reply:
        current = _owner(req, kind)["metadata"]
        if req.params["key"] not in current:
            raise NotFound("Metadata item was not found")
        return Reply({"meta": {req.params["key"]: current[req.params["key"]]}})

    def set_key(req: VolumeRequest) -> Reply:
        current = _owner(req, kind)["metadata"]
        meta = _document(req, "meta")
        if list(meta) != [req.params["key"]]:
            raise BadRequest("Request body and URI mismatch")
        _save(req, kind, {**current, **meta})
        return Reply({"meta": meta})

    def delete_key(req: VolumeRequest) -> Reply:
        current = dict(_owner(req, kind)["metadata"])
        if current.pop(req.params["key"], None) is None:
            raise NotFound("Metadata item was not found")
        _save(req, kind, current)
        return Reply(None, 200)

    return {"show": show, "merge": merge, "replace": replace, "show_key": show_key,
            "set_key": set_key, "delete_key": delete_key}  # fmt: skip


def register(table: RouteTable) -> None:
    for kind in ("volumes", "snapshots"):
        verbs = handlers(kind)
        base = f"/v3/{kind}/{{id}}/metadata"
        table.add("GET", base, Endpoint(verbs["show"]))
        table.add("POST", base, Endpoint(verbs["merge"]))
        table.add("PUT", base, Endpoint(verbs["replace"]))
        table.add("GET", base + "/{key}", Endpoint(verbs["show_key"]))
        table.add("PUT", base + "/{key}", Endpoint(verbs["set_key"]))
        table.add("DELETE", base + "/{key}", Endpoint(verbs["delete_key"]))
