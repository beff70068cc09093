"""``POST /servers/{id}/action`` with ``createImage`` or ``createBackup``: 202; from 2.45 the
body ``{"image_id": ...}``, before it a ``Location`` header (createImage: the image service's
URL of the image; createBackup: the compute API's ``/images/{id}``, only when rotation > 0)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.resources.servers.create_request import normalize_name
from openkeel.api.usecases.servers.snapshot import ServerSnapshotter


def _answer(req: ApiRequest, image_id: str, location: str | None) -> Reply:
    if req.at_least("2.45"):
        return Reply({"image_id": image_id})
    return Reply(None, headers=[("Location", location)] if location else [])


def _image_service_url(req: ApiRequest) -> str:
    """Nova's ``generate_image_url`` base: the first Glance endpoint, else the embedded image
    API beside this one (decision 0034)."""
    glance = req.services.conf.glance
    endpoints = [glance.endpoint_override] if glance.endpoint_override else glance.api_servers
    if endpoints:
        return str(endpoints[0]).rstrip("/")
    return f"{req.bookmark_base}/image"


def create_image(req: ApiRequest) -> Reply:
    """createImage."""
    body: dict[str, Any] = req.body["createImage"]
    snapshotter = ServerSnapshotter(req.services, req.context)
    found = snapshotter.find(req.params["id"])
    snapshotter.authorize("create_image", found, with_user=False)
    metadata = dict(body.get("metadata") or {})
    if not req.at_least("2.39"):
        snapshotter.check_metadata_quota(metadata)
    image = snapshotter.create_image(found, normalize_name(body["name"]), metadata)
    return _answer(req, image.id, f"{_image_service_url(req)}/images/{image.id}")


def create_backup(req: ApiRequest) -> Reply:
    """createBackup."""
    body: dict[str, Any] = req.body["createBackup"]
    snapshotter = ServerSnapshotter(req.services, req.context)
    found = snapshotter.find(req.params["id"])
    snapshotter.authorize_backup(found)
    rotation = int(body["rotation"])
    metadata = dict(body.get("metadata") or {})
    if not req.at_least("2.39"):
        snapshotter.check_metadata_quota(metadata)
    name = normalize_name(body["name"])
    image = snapshotter.create_backup(found, name, (body["backup_type"], rotation), metadata)
    return _answer(req, image.id, req.self_link("images", image.id) if rotation > 0 else None)
