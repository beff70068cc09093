"""Response bodies of the /images proxy: Nova's status/progress mapping, minRam/minDisk,
OS-EXT-IMG-SIZE:size, OS-DCF:diskConfig from ``auto_disk_config``, snapshot server links,
self/bookmark/alternate links and ``images_links`` paging."""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from openkeel.api.request import ApiRequest
from openkeel.clients.image import Image

STATUS = {
    "active": "ACTIVE",
    "queued": "SAVING",
    "saving": "SAVING",
    "deleted": "DELETED",
    "pending_delete": "DELETED",
    "killed": "ERROR",
}
PROGRESS = {"queued": 25, "saving": 50, "active": 100}
TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")


def _time(value: datetime.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def _with_prefix(url: str, prefix: str | None) -> str:
    if not prefix:
        return url
    parts, pre = list(urlsplit(url)), urlsplit(prefix)
    parts[0:2] = [pre.scheme, pre.netloc]
    parts[2] = pre.path + parts[2]
    return urlunsplit(parts).rstrip("/")


def _glance_base(req: ApiRequest) -> str:
    glance = req.services.conf.glance
    servers = [glance.endpoint_override] if glance.endpoint_override else glance.api_servers
    base = servers[0] if servers else req.bookmark_base
    if "//" not in base:
        base = f"http://{base}"
    return _with_prefix(base.rstrip("/"), req.services.conf.api.glance_link_prefix)


def _links(req: ApiRequest, image_id: str) -> list[dict[str, str]]:
    return [
        {"rel": "self", "href": req.self_link("images", image_id)},
        {"rel": "bookmark", "href": req.bookmark_link("images", image_id)},
        {
            "rel": "alternate",
            "type": "application/vnd.openstack.image",
            "href": f"{_glance_base(req)}/images/{image_id}",
        },
    ]


def image_basic(req: ApiRequest, image: Image) -> dict[str, Any]:
    """The index entry."""
    return {"id": image.id, "name": image.name, "links": _links(req, image.id)}


def image_detail(req: ApiRequest, image: Image) -> dict[str, Any]:
    """The show / detail entry."""
    body: dict[str, Any] = {
        "id": image.id,
        "name": image.name,
        "minRam": image.min_ram,
        "minDisk": image.min_disk,
        "metadata": dict(image.properties),
        "created": _time(image.created_at),
        "updated": _time(image.updated_at),
        "status": STATUS.get(image.status, "UNKNOWN"),
        "progress": PROGRESS.get(image.status, 0),
        "OS-EXT-IMG-SIZE:size": image.size,
        "links": _links(req, image.id),
    }
    server = image.properties.get("instance_uuid")
    if server is not None:
        body["server"] = {
            "id": server,
            "links": [
                {"rel": "self", "href": req.self_link("servers", server)},
                {"rel": "bookmark", "href": req.bookmark_link("servers", server)},
            ],
        }
    auto = image.properties.get("auto_disk_config")
    if auto is not None:
        body["OS-DCF:diskConfig"] = "AUTO" if str(auto).lower() in TRUE_STRINGS else "MANUAL"
    return body


def image_list(req: ApiRequest, images: list[Image], detail: bool) -> dict[str, Any]:
    """``{"images": [...]}`` plus ``images_links`` when a full page came back."""
    render = image_detail if detail else image_basic
    body: dict[str, Any] = {"images": [render(req, image) for image in images]}
    max_limit: int = req.services.conf.api.max_limit
    limit = req.query_value("limit")
    page = min(int(limit) if limit else max_limit, max_limit)
    if page and page == len(images):
        collection = "images/detail" if detail else "images"
        body["images_links"] = [{"rel": "next", "href": _next_link(req, collection, images[-1].id)}]
    return body


def _next_link(req: ApiRequest, collection: str, marker: str) -> str:
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = marker
    return f"{req.self_link(collection)}?{urlencode(params)}"
