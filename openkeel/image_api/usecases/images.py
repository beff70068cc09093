"""Images as Glance's v2 API manages them: create, show, update by JSON patch, delete, tags,
deactivate/reactivate.

Called by the ``images``, ``image_tags`` and ``image_actions`` resources. Who may do what
(decision 0034, Glance's default policy without its configurability): everyone sees public
images, their own, community ones by id and shared ones they are a member of; only the owner
(or an admin) changes or deletes an image; only an admin makes one public or gives one away.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from openkeel.clients.image import Caller, Image, ImageNotFound
from openkeel.image_api.faults import BadRequest, Conflict, Forbidden, NotFound
from openkeel.image_api.services import ImageApiServices
from openkeel.image_api.usecases.image_schema import (
    BASE,
    READ_ONLY,
    RESERVED,
    RESERVED_PREFIX,
    schema_error,
)
from openkeel.image_api.usecases.patching import Change, apply_changes

# Image attributes stored as columns; everything else a client sets is a custom property.
COLUMNS = (
    "name", "visibility", "protected", "os_hidden", "owner", "container_format", "disk_format",
    "min_ram", "min_disk",
)  # fmt: skip
DEFAULTS: dict[str, Any] = {
    "name": None, "visibility": "shared", "protected": False, "os_hidden": False,
    "container_format": None, "disk_format": None, "min_ram": 0, "min_disk": 0, "tags": [],
}  # fmt: skip


def find(services: ImageApiServices, caller: Caller, image_id: str) -> Image:
    """The image when the caller may see it, else 404."""
    return services.repository.find_visible(caller, image_id)


def owned(services: ImageApiServices, caller: Caller, image_id: str, doing: str) -> Image:
    """The image when the caller owns it (or is an admin): 404 unseen, 403 not the owner."""
    image = find(services, caller, image_id)
    if not (caller.is_admin or (image.owner is not None and image.owner == caller.project_id)):
        raise Forbidden(f"You are not permitted to {doing} this image.")
    return image


def check_attribute(key: str) -> None:
    """403 for an attribute no client may set."""
    if key in READ_ONLY:
        raise Forbidden(f"Attribute '{key}' is read-only.")
    if key in RESERVED or key.startswith(RESERVED_PREFIX):
        raise Forbidden(f"Attribute '{key}' is reserved.")


def check_authority(caller: Caller, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    """Only an admin makes an image public or hands it to another project."""
    if caller.is_admin:
        return
    if after.get("visibility") == "public" and before.get("visibility") != "public":
        raise Forbidden("You are not authorized to publicize images.")
    if after.get("owner") != before.get("owner"):
        raise Forbidden(f"You are not permitted to create images owned by '{after.get('owner')}'.")


def editable(image: Image) -> dict[str, Any]:
    """The attributes a client may change, as the API shows them."""
    document = {key: getattr(image, key) for key in COLUMNS}
    return {**document, "tags": list(image.tags), **image.properties}


def _validated(document: dict[str, Any]) -> dict[str, Any]:
    reason = schema_error(document)
    if reason is not None:
        raise BadRequest(reason)
    return document


def _stored(document: Mapping[str, Any]) -> dict[str, Any]:
    """Column values (``tags``, ``properties`` included) of an editable document."""
    values = {key: document.get(key, DEFAULTS.get(key)) for key in COLUMNS}
    values["tags"] = list(dict.fromkeys(document.get("tags") or ()))
    values["properties"] = {k: v for k, v in document.items() if k not in BASE}
    return values


def create(services: ImageApiServices, caller: Caller, body: Any) -> Image:
    """POST /v2/images: a queued image without data."""
    if not isinstance(body, dict):
        raise BadRequest("Image creation requires a JSON object.")
    for key in body:
        check_attribute(key)
    document = _validated({**DEFAULTS, "owner": caller.project_id, **body})
    check_authority(caller, {"owner": caller.project_id}, document)
    image_id = str(document.pop("id", None) or uuid.uuid4())
    try:
        services.repository.load(image_id)
    except ImageNotFound:
        pass
    else:
        raise Conflict(f"Image with identifier {image_id} already exists!")
    values = _stored(document)
    return services.repository.create(
        Image(id=image_id, status="queued", **{**values, "tags": tuple(values["tags"])})
    )


def update(services: ImageApiServices, caller: Caller, image_id: str, ops: Any) -> Image:
    """PATCH /v2/images/{id}: apply a v2.1 JSON patch."""
    image = owned(services, caller, image_id, "modify")
    before = editable(image)
    changes = apply_changes(before, ops, BASE)
    for change in changes.touched:
        if change.key == "id":  # settable on create only
            raise Forbidden("Attribute 'id' is read-only.")
        check_attribute(change.key)
    after = _validated(changes.document)
    _check_changes(image, changes.touched, caller, before, after)
    saved = services.repository.update(image_id, _stored(after))
    if saved is None:
        raise ImageNotFound(image_id)
    return saved


def _check_changes(
    image: Image,
    touched: list[Change],
    caller: Caller,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> None:
    for change in touched:
        formats = change.key in ("container_format", "disk_format")
        if formats and image.status != "queued" and before[change.key] != after[change.key]:
            raise Forbidden(f"Attribute {change.key} can be only replaced for a queued image.")
    check_authority(caller, before, after)


def delete(services: ImageApiServices, caller: Caller, image_id: str) -> None:
    """DELETE /v2/images/{id}: the record, its members and its data."""
    image = owned(services, caller, image_id, "delete")
    if image.protected:
        raise Forbidden(f"Image {image_id} is protected and cannot be deleted.")
    if not services.repository.delete(image_id):
        raise ImageNotFound(image_id)
    services.files.delete(image_id)


def add_tag(services: ImageApiServices, caller: Caller, image_id: str, tag: str) -> None:
    """PUT /v2/images/{id}/tags/{tag} (adding a present tag changes nothing)."""
    image = owned(services, caller, image_id, "modify")
    if len(tag) > 255:
        raise BadRequest(f"Provided object does not match schema 'image': tag '{tag}' is too long")
    if tag not in image.tags:
        services.repository.update(image_id, {"tags": [*image.tags, tag]})


def remove_tag(services: ImageApiServices, caller: Caller, image_id: str, tag: str) -> None:
    """DELETE /v2/images/{id}/tags/{tag} (404 when the image has no such tag)."""
    image = owned(services, caller, image_id, "modify")
    if tag not in image.tags:
        raise NotFound(f"Tag {tag} not found on image {image_id}")
    services.repository.update(image_id, {"tags": [t for t in image.tags if t != tag]})


def set_active(services: ImageApiServices, caller: Caller, image_id: str, active: bool) -> None:
    """Deactivate (no data downloads but for admins; nothing boots from it) or reactivate an
    image: admins only, as Glance's default policy; only between active and deactivated."""
    image = find(services, caller, image_id)
    verb = "reactivate" if active else "deactivate"
    if not caller.is_admin:
        raise Forbidden(f"You are not authorized to {verb} images.")
    wanted, other = ("active", "deactivated") if active else ("deactivated", "active")
    if image.status == wanted:
        return
    if (
        image.status != other
        or services.repository.update(image_id, {"status": wanted}, other) is None
    ):
        raise Forbidden(f"Not allowed to {verb} an image in status '{image.status}'.")
