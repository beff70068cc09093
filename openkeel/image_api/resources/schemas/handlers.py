"""Handlers of /v2/schemas/*."""

from __future__ import annotations

from openkeel.image_api.request import ImageRequest, Reply
from openkeel.image_api.usecases.image_schema import (
    IMAGE_SCHEMA,
    MEMBER_SCHEMA,
    collection_schema,
)


def show_image_schema(req: ImageRequest) -> Reply:
    """GET /v2/schemas/image."""
    return Reply(IMAGE_SCHEMA)


def show_images_schema(req: ImageRequest) -> Reply:
    """GET /v2/schemas/images."""
    return Reply(collection_schema("images", IMAGE_SCHEMA, links=True))


def show_member_schema(req: ImageRequest) -> Reply:
    """GET /v2/schemas/member."""
    return Reply(MEMBER_SCHEMA)


def show_members_schema(req: ImageRequest) -> Reply:
    """GET /v2/schemas/members."""
    return Reply(collection_schema("members", MEMBER_SCHEMA, links=False))
