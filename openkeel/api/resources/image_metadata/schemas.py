"""Request schemas of /images/{image_id}/metadata: the bodies of server metadata, as Nova's
image metadata API takes the same metadata parameter types (its query stays loose: no 2.102
delta)."""

from __future__ import annotations

from openkeel.api.resources.server_metadata.schemas import (
    CREATE_V21,
    QUERY_V21,
    UPDATE_ALL_V21,
    UPDATE_V21,
)

__all__ = ["CREATE_V21", "QUERY_V21", "UPDATE_ALL_V21", "UPDATE_V21"]
