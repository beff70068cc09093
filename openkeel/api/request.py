"""What a handler receives (ApiRequest) and may return (Reply).

Handlers are plain synchronous functions ``(ApiRequest) -> Reply | dict | None`` run on the
app's worker threads; they never see ASGI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.microversion import APIVersion
from openkeel.api.services import ApiServices


@lru_cache(maxsize=512)
def _parsed(text: str) -> APIVersion:
    # Views ask about the same few versions hundreds of times per page.
    return APIVersion.parse(text)


@dataclass
class ApiRequest:
    """One parsed, authenticated, validated request."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    body: Any
    version: APIVersion
    context: RequestContext
    headers: dict[str, str]
    services: ApiServices
    # Base of self links, e.g. "http://host:8774/v2.1" and the bookmark base "http://host:8774".
    link_base: str = ""
    bookmark_base: str = ""
    # The project id when the client put it in the URL (Nova then puts it in links too).
    url_project_id: str | None = None

    def at_least(self, text: str) -> bool:
        """True when the negotiated microversion is >= ``text`` (e.g. "2.55")."""
        return self.version >= _parsed(text)

    def self_link(self, *parts: str) -> str:
        """Nova's ``self`` link for a resource path."""
        return "/".join((self._base(self.link_base), *parts))

    def bookmark_link(self, *parts: str) -> str:
        """Nova's ``bookmark`` link (no version segment)."""
        return "/".join((self._base(self.bookmark_base), *parts))

    def _base(self, base: str) -> str:
        return f"{base}/{self.url_project_id}" if self.url_project_id else base

    def query_value(self, name: str) -> str | None:
        """The last value of a query parameter (Nova takes the last when repeated)."""
        values = self.query.get(name)
        return values[-1] if values else None


@dataclass
class Reply:
    """A handler's answer when it needs more than the endpoint's default status."""

    body: Any = None
    status: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
