"""Members of shared images: the owner shares, the member accepts or rejects.

Called by the ``image_members`` resource. Only ``shared`` images have members (403 otherwise);
the owner (or an admin) adds and removes them and sees them all; a member sees and answers only
its own membership; anyone else gets a 404, as the image is invisible to them.
"""

from __future__ import annotations

from typing import Any

from openkeel.clients.image import Caller, Image
from openkeel.db.image_repository import ImageMember, ImageMemberNotFound
from openkeel.image_api.faults import BadRequest, Forbidden
from openkeel.image_api.services import ImageApiServices
from openkeel.image_api.usecases.image_schema import MEMBER_STATUSES
from openkeel.image_api.usecases.images import find, owned


def _shared(image: Image) -> Image:
    if image.visibility != "shared":
        raise Forbidden("Only shared images have members.")
    return image


def _is_owner(caller: Caller, image: Image) -> bool:
    return caller.is_admin or (image.owner is not None and image.owner == caller.project_id)


def list_members(services: ImageApiServices, caller: Caller, image_id: str) -> list[ImageMember]:
    """The members the caller may see."""
    image = _shared(find(services, caller, image_id))
    members = services.repository.members(image_id)
    if _is_owner(caller, image):
        return members
    return [m for m in members if m.member_id == caller.project_id]


def show_member(
    services: ImageApiServices, caller: Caller, image_id: str, member_id: str
) -> ImageMember:
    """One membership, for the owner or that member."""
    image = _shared(find(services, caller, image_id))
    if not _is_owner(caller, image) and member_id != caller.project_id:
        raise ImageMemberNotFound(image_id, member_id)
    return services.repository.member(image_id, member_id)


def add_member(services: ImageApiServices, caller: Caller, image_id: str, body: Any) -> ImageMember:
    """Share the image with the project ``body["member"]`` (pending)."""
    if not isinstance(body, dict) or not isinstance(body.get("member"), str) or not body["member"]:
        raise BadRequest('Request body must be a JSON object with a "member" string.')
    _shared(owned(services, caller, image_id, "share"))
    return services.repository.add_member(image_id, body["member"])


def answer(
    services: ImageApiServices, caller: Caller, image_id: str, member_id: str, body: Any
) -> ImageMember:
    """The member accepts, rejects or puts back to pending."""
    status = body.get("status") if isinstance(body, dict) else None
    if status not in MEMBER_STATUSES:
        raise BadRequest(f"Invalid status: {status!r}; one of {', '.join(MEMBER_STATUSES)}.")
    _shared(find(services, caller, image_id))
    if member_id != caller.project_id and not caller.is_admin:
        raise Forbidden("Only the member itself may change the status of its membership.")
    return services.repository.set_member_status(image_id, member_id, status)


def remove_member(
    services: ImageApiServices, caller: Caller, image_id: str, member_id: str
) -> None:
    """Stop sharing the image with a project."""
    _shared(owned(services, caller, image_id, "unshare"))
    services.repository.remove_member(image_id, member_id)
