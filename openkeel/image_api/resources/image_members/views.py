"""Image members as Glance v2 shows them."""

from __future__ import annotations

from typing import Any

from openkeel.db.image_repository import ImageMember
from openkeel.image_api.resources.images.views import timestamp


def member_view(member: ImageMember) -> dict[str, Any]:
    """One member document."""
    return {
        "image_id": member.image_id,
        "member_id": member.member_id,
        "status": member.status,
        "created_at": timestamp(member.created_at),
        "updated_at": timestamp(member.updated_at),
        "schema": "/v2/schemas/member",
    }
