"""Collection bodies of ``GET /servers`` and ``/servers/detail`` (with ``servers_links``) and
the ``POST /servers`` answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import views_parts as parts
from openkeel.api.resources.servers.views_server import ShowOptions, server
from openkeel.api.usecases.servers.records import ServerRecord


def brief(req: ApiRequest, record: ServerRecord) -> dict[str, Any]:
    """One ``GET /servers`` item (2.69: a server of a down cell has a status, no name)."""
    inst = record.instance
    if record.down:
        return {"id": inst.uuid, "status": "UNKNOWN", "links": parts.links(req, inst.uuid)}
    return {"id": inst.uuid, "name": inst.display_name, "links": parts.links(req, inst.uuid)}


def index(req: ApiRequest, records: Sequence[ServerRecord], max_limit: int) -> dict[str, Any]:
    """``GET /servers``."""
    body: dict[str, Any] = {"servers": [brief(req, r) for r in records]}
    _add_links(req, body, records, "servers", max_limit)
    return body


def detail(
    req: ApiRequest, records: Sequence[ServerRecord], opts: ShowOptions, max_limit: int
) -> dict[str, Any]:
    """``GET /servers/detail``."""
    body: dict[str, Any] = {"servers": [server(req, r, opts) for r in records]}
    _add_links(req, body, records, "servers/detail", max_limit)
    return body


def _add_links(
    req: ApiRequest,
    body: dict[str, Any],
    records: Sequence[ServerRecord],
    path: str,
    max_limit: int,
) -> None:
    limit = req.query_value("limit")
    page_size = min(int(limit), max_limit) if limit is not None else max_limit
    if page_size and page_size == len(records):
        marker = records[-1].instance.uuid
        body["servers_links"] = [{"rel": "next", "href": _next_href(req, path, marker)}]


def _next_href(req: ApiRequest, path: str, marker: str) -> str:
    # Nova sorts the (name, value) pairs, keeps the last value per name, then sets the marker.
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = marker
    return f"{req.self_link(path)}?{urlencode(params)}"


def created(
    req: ApiRequest,
    server_id: str,
    auto_disk_config: bool,
    security_groups: list[dict[str, Any]] | None,
    admin_pass: str | None,
) -> dict[str, Any]:
    """The ``POST /servers`` answer (``adminPass`` when ``[api] enable_instance_password``)."""
    body: dict[str, Any] = {
        "id": server_id,
        "links": parts.links(req, server_id),
        "OS-DCF:diskConfig": "AUTO" if auto_disk_config else "MANUAL",
        "security_groups": security_groups
        if security_groups is not None
        else [{"name": "default"}],
    }
    if admin_pass is not None:
        body["adminPass"] = admin_pass
    return {"server": body}
