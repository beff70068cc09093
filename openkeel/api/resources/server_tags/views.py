"""Response bodies and headers of the server tags API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openkeel.api.request import ApiRequest


def tags(items: Sequence[str]) -> dict[str, Any]:
    """``{"tags": [...]}`` (index, update_all)."""
    return {"tags": list(items)}


def location(req: ApiRequest, server_id: str, tag: str) -> str:
    """The ``Location`` of an added tag: the server's self link + ``/tags/<tag>``."""
    return f"{req.self_link('servers', server_id)}/tags/{tag}"
