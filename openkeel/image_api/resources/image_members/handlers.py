"""Handlers of /v2/images/{image_id}/members[/{member_id}]."""

from __future__ import annotations

from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.resources.image_members.views import member_view
from openkeel.image_api.usecases import members


def list_image_members(req: ImageRequest) -> Reply:
    """GET .../members."""
    found = members.list_members(req.services, req.caller, req.params["image_id"])
    return Reply({"members": [member_view(m) for m in found], "schema": "/v2/schemas/members"})


def create_image_member(req: ImageRequest) -> Reply:
    """POST .../members ``{"member": "<project>"}``."""
    member = members.add_member(req.services, req.caller, req.params["image_id"], req.json())
    return Reply(member_view(member))


def show_image_member(req: ImageRequest) -> Reply:
    """GET .../members/{member_id}."""
    member = members.show_member(
        req.services, req.caller, req.params["image_id"], req.params["member_id"]
    )
    return Reply(member_view(member))


def update_image_member(req: ImageRequest) -> Reply:
    """PUT .../members/{member_id} ``{"status": "accepted"}``."""
    member = members.answer(
        req.services, req.caller, req.params["image_id"], req.params["member_id"], req.json()
    )
    return Reply(member_view(member))


def delete_image_member(req: ImageRequest) -> Reply:
    """DELETE .../members/{member_id}: 204."""
    members.remove_member(req.services, req.caller, req.params["image_id"], req.params["member_id"])
    return Reply(status=204)
