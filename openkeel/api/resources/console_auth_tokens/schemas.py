"""Query of ``GET /os-console-auth-tokens/{id}``: anything before 2.99, nothing from it."""

from __future__ import annotations

from typing import Any

SHOW_QUERY_V21: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
SHOW_QUERY_V299: dict[str, Any] = {**SHOW_QUERY_V21, "additionalProperties": False}
