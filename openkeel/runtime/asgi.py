"""ASGI request scope readers both HTTP roles need (the compute API and the image API apps).

Kept below the roles so neither imports the other: headers as one lower-cased dict, and the
base URL the client used (for version documents and links).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]


def scope_headers(scope: Scope) -> dict[str, str]:
    """Lower-cased header names; repeated headers joined with commas."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]},{value}" if name in headers else value
    return headers


def base_url(scope: Scope, headers: dict[str, str]) -> str:
    """``scheme://host[:port][root_path]`` as the client reached us."""
    scheme = headers.get("x-forwarded-proto", scope.get("scheme", "http"))
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("localhost", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}{scope.get('root_path', '')}"
