"""uvicorn's httptools protocol, answering the requests it cannot parse as Nova would.

A request line or header the parser refuses (a URL over httptools' 65,535-byte limit, a
malformed request line, a bad header) never reaches the ASGI app: uvicorn answers it itself
with a ``text/plain`` 400. This subclass keeps uvicorn's behaviour (400, connection closed)
and replaces the body with Nova's JSON fault and adds the request id headers every other
answer of the API carries. Used by ``openkeel.cmd.api.api_server``.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from openkeel.api.context import new_request_id
from openkeel.api.faults import FAULT_CONTENT_TYPE, Fault


def unparsable_request_answer(message: str, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole HTTP/1.1 answer to a request that could not be parsed."""
    body = Fault(400, message).body()
    request_id = new_request_id().encode()
    headers = [
        *default_headers,
        (b"content-type", FAULT_CONTENT_TYPE),
        (b"content-length", str(len(body)).encode()),
        (b"x-openstack-request-id", request_id),
        (b"x-compute-request-id", request_id),
        (b"connection", b"close"),
    ]
    lines = [b"HTTP/1.1 400 Bad Request"] + [name + b": " + value for name, value in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class NovaFaultHttpToolsProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` whose parse-error answer is a Nova fault."""

    def send_400_response(self, msg: str) -> None:
        """Answer 400 with ``{"badRequest": ...}`` and close, as uvicorn does."""
        self.transport.write(unparsable_request_answer(msg, self.server_state.default_headers))
        self.transport.close()
