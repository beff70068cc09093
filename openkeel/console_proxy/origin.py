"""The Origin check of a console websocket (Nova's, in NovaProxyRequestHandler).

A browser page of another site must not open a user's console with the user's token: an
Origin header, when sent, must name this proxy's own host (the Host header) or one of
``[console] allowed_origins``, with the scheme of the token's access URL (``http`` also for a
``ws`` URL, ``https`` for ``wss``; ``X-Forwarded-Proto`` wins over the Origin's scheme).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit


def _hostname(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def origin_refusal(
    headers: Mapping[str, str], allowed: Sequence[str], access_url_base: str | None
) -> str | None:
    """Why the Origin is refused (None: accepted, or no Origin sent)."""
    origin = headers.get("origin")
    if origin is None:
        return None
    parts = urlsplit(origin)
    scheme = headers.get("x-forwarded-proto") or parts.scheme
    if not parts.hostname or not scheme:
        return "Origin header not valid."
    expected_hosts = [*allowed, _hostname(headers.get("host", ""))]
    if parts.hostname not in expected_hosts:
        return "Origin header does not match this host."
    expected = [urlsplit(access_url_base or "").scheme]
    if "ws" in expected:
        expected.append("http")
    if "wss" in expected:
        expected.append("https")
    if scheme not in expected:
        return "Origin header protocol does not match this host."
    return None
