"""What an image API handler receives (ImageRequest) and may return (Reply); the route table.

Handlers are plain synchronous functions run on the app's worker threads; they never see ASGI.
Each resource's ``routes.py`` adds its paths to a :class:`RouteTable`; a path that exists under
another method answers 405 with ``Allow``, as Glance's router does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from openkeel.clients.image import Caller
from openkeel.image_api.faults import BadRequest, MethodNotAllowed, NotFound
from openkeel.runtime.asgi_apps import PathTable


@dataclass
class ImageRequest:
    """One parsed request (the body of an upload stays unread: see ``chunks``)."""

    method: str
    params: dict[str, str]
    query: list[tuple[str, str]]
    headers: dict[str, str]
    caller: Caller
    services: Any
    body: bytes = b""
    # Where the image API is reached, e.g. "http://host:8774/image" (version documents).
    base: str = ""
    # The upload's body, read from the client as it is consumed (``streams_body`` endpoints).
    chunks: Iterator[bytes] | None = None

    def json(self) -> Any:
        """The body as JSON (400 when it is not)."""
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Malformed JSON in request body.") from exc

    def content_type(self) -> str:
        """The body's media type, lower case, without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def values(self, name: str) -> list[str]:
        """Every value of a query parameter, in order."""
        return [value for key, value in self.query if key == name]


@dataclass
class Reply:
    """A handler's answer: JSON ``body``, or ``stream`` of bytes, with status and headers."""

    body: Any = None
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    stream: Iterable[bytes] | None = None


Handler = Callable[[ImageRequest], Reply]


@dataclass(frozen=True)
class Endpoint:
    """One method on one path."""

    handler: Handler
    # Anonymous calls (version discovery) skip authentication.
    anonymous: bool = False
    # The handler reads the body itself, as it arrives (image upload).
    streams_body: bool = False


class RouteTable(PathTable[Endpoint]):
    """Path templates (``/v2/images/{image_id}``) -> endpoints by method (404 unknown path,
    405 with ``Allow`` for an unknown method)."""

    def __init__(self) -> None:
        super().__init__(
            lambda: NotFound("The resource could not be found."),
            lambda allow: MethodNotAllowed(
                "The method is not allowed for this resource.", (("Allow", allow),)
            ),
        )
