"""Images as Glance v2 shows them: every attribute (null when unset), custom properties at the
top level, and the ``self``/``file``/``schema`` links relative to the API root."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.clients.image import Image

ATTRIBUTES = (
    "id", "name", "status", "visibility", "protected", "os_hidden", "owner", "min_ram",
    "min_disk", "size", "virtual_size", "checksum", "os_hash_algo", "os_hash_value",
    "container_format", "disk_format",
)  # fmt: skip


def timestamp(value: datetime.datetime | None) -> str | None:
    """Glance's ``2026-01-02T03:04:05Z``."""
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def image_view(image: Image) -> dict[str, Any]:
    """One image document."""
    document: dict[str, Any] = dict(image.properties)
    document.update({key: getattr(image, key) for key in ATTRIBUTES})
    document.update(
        {
            "tags": list(image.tags),
            "created_at": timestamp(image.created_at),
            "updated_at": timestamp(image.updated_at),
            "self": f"/v2/images/{image.id}",
            "file": f"/v2/images/{image.id}/file",
            "schema": "/v2/schemas/image",
        }
    )
    return document
