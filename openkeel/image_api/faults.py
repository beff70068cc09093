"""The image API's errors and how they are answered: Glance's error bodies, by class, here only.

Use cases raise these (or the storage layer's image errors, translated by :func:`fault_for`);
the app (:mod:`openkeel.image_api.app`) renders them. Glance answers errors through webob: an
HTML page for browsers and ``Accept: */*`` (python-glanceclient, openstacksdk parse it), JSON
``{"message", "code": "404 Not Found", "title"}`` for ``Accept: application/json``, else text.
"""

from __future__ import annotations

import html

import orjson

from openkeel.clients.image import ImageBadRequest, ImageNotAuthorized, ImageNotFound
from openkeel.db.image_repository import ImageMemberExists, ImageMemberNotFound
from openkeel.domain.errors import Unauthorized


class ImageApiFault(Exception):
    """An answer other than success; subclasses fix the status."""

    status = 500
    title = "Internal Server Error"

    def __init__(self, message: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers


class BadRequest(ImageApiFault):
    """400: the request is malformed or breaks the schema."""

    status, title = 400, "Bad Request"


class ClientGone(ImageApiFault):
    """The client closed the connection before its whole request body arrived."""

    status, title = 400, "Bad Request"


class NotAuthenticated(ImageApiFault):
    """401: no valid credentials."""

    status, title = 401, "Unauthorized"


class Forbidden(ImageApiFault):
    """403: the caller may not do this, or the attribute is read-only or reserved."""

    status, title = 403, "Forbidden"


class NotFound(ImageApiFault):
    """404: no such image (or not visible), member, tag or path."""

    status, title = 404, "Not Found"


class MethodNotAllowed(ImageApiFault):
    """405: the path exists, the method does not."""

    status, title = 405, "Method Not Allowed"


class Conflict(ImageApiFault):
    """409: the image's state does not allow it."""

    status, title = 409, "Conflict"


class Gone(ImageApiFault):
    """410: the image was deleted while its data was being uploaded."""

    status, title = 410, "Gone"


class RequestEntityTooLarge(ImageApiFault):
    """413: a JSON request body beyond what any image call needs."""

    status, title = 413, "Request Entity Too Large"


class UnsupportedMediaType(ImageApiFault):
    """415: the body's content type is not the one this call takes."""

    status, title = 415, "Unsupported Media Type"


def fault_for(exc: Exception) -> ImageApiFault:
    """The answer to ``exc``: itself, a translated storage or auth error, or a 500."""
    if isinstance(exc, ImageApiFault):
        return exc
    if isinstance(exc, ImageNotFound):
        return NotFound(f"No image found with ID {exc.image_id}")
    if isinstance(exc, ImageMemberNotFound):
        return NotFound(f"{exc.member_id} is not a member of image {exc.image_id}")
    if isinstance(exc, ImageMemberExists):
        return Conflict(f"Member {exc.member_id} already exists for image {exc.image_id}")
    if isinstance(exc, ImageNotAuthorized):
        return Forbidden(str(exc))
    if isinstance(exc, ImageBadRequest):
        return BadRequest(str(exc))
    if isinstance(exc, Unauthorized):
        # Under Keystone, where to get a token (keystonemiddleware's header).
        uri = getattr(exc, "www_authenticate_uri", None)
        headers = (("WWW-Authenticate", f'Keystone uri="{uri}"'),) if uri else ()
        return NotAuthenticated(exc.message, headers)
    return ImageApiFault("The server has either erred or is incapable of performing the request.")


def render(fault: ImageApiFault, accept: str) -> tuple[bytes, bytes]:
    """(content type, body) of a fault, negotiated as webob does for Glance: HTML when the client
    takes HTML or anything (``*/*``), JSON when it asks for JSON, else plain text."""
    code = f"{fault.status} {fault.title}"
    if "html" in accept or "*/*" in accept:
        page = (
            f"<html>\n <head>\n  <title>{code}</title>\n </head>\n <body>\n"
            f"  <h1>{code}</h1>\n  {html.escape(fault.message)}<br /><br />\n\n\n\n"
            " </body>\n</html>"
        )
        return b"text/html; charset=UTF-8", page.encode()
    if "json" in accept:
        body = {"message": fault.message, "code": code, "title": fault.title}
        return b"application/json", orjson.dumps(body)
    return b"text/plain; charset=UTF-8", f"{code}\n\n{fault.message}\n\n".encode()
