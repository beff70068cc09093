"""GlanceClient on a keystoneauth1 session: the caller's token on the wire, the endpoint from
the caller's service catalog when none is configured, and unreachable endpoints retried."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import pytest

from openkeel.api.usecases.images import glance_client
from openkeel.clients.image import (
    Caller,
    CatalogLookup,
    GlanceClient,
    ImageServiceUnavailable,
)
from tests.clients.test_image_catalog import GLANCE_IMAGE, FakeGlance


class StubGlance:
    """Answers GET /v2/images/{id} with GLANCE_IMAGE; remembers each request's token."""

    def __init__(self) -> None:
        self.tokens: list[str | None] = []
        self.paths: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                stub.tokens.append(self.headers.get("X-Auth-Token"))
                stub.paths.append(self.path)
                data = json.dumps({**GLANCE_IMAGE, "id": self.path.rsplit("/", 1)[-1]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False  # server_close() joins every handler thread
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="stub-glance")
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()


@pytest.fixture
def stub() -> Iterator[StubGlance]:
    server = StubGlance()
    try:
        yield server
    finally:
        server.stop()


def catalog(url: str) -> tuple[dict[str, Any], ...]:
    return (
        {"type": "compute", "endpoints": [{"region": "R1", "publicURL": "http://nova"}]},
        {
            "type": "image",
            "endpoints": [
                {"region": "R0", "internalURL": "http://elsewhere", "publicURL": "http://x"},
                {"region": "R1", "internalURL": f"{url}/v2", "publicURL": "http://public"},
            ],
        },
    )


def group(**values: Any) -> Any:
    """A ``[glance]`` group with Nova's defaults and ``values``."""
    defaults = {
        "endpoint_override": None, "api_servers": None, "region_name": None, "timeout": 5,
        "num_retries": 1, "valid_interfaces": "internal,public",
    }  # fmt: skip
    return SimpleNamespace(**{**defaults, **values})


def test_session_sends_the_callers_token_to_a_fixed_endpoint(stub: StubGlance) -> None:
    client = glance_client(group(api_servers=[stub.url]))
    assert client is not None
    assert client.get(Caller("p", False, "tok-1"), "i1").id == "i1"
    assert stub.tokens == ["tok-1"] and stub.paths == ["/v2/images/i1"]


def test_endpoint_from_the_callers_catalog_by_region_and_interface(stub: StubGlance) -> None:
    client = glance_client(group(region_name="R1"))
    assert client is not None
    caller = Caller("p", False, "tok-2", catalog(stub.url))
    assert client.get(caller, "i2").id == "i2"
    assert stub.paths == ["/v2/images/i2"]


def test_no_glance_configured_means_the_embedded_service() -> None:
    assert glance_client(group()) is None


def test_no_image_endpoint_in_the_catalog_is_unavailable() -> None:
    client = GlanceClient(transport=FakeGlance(), lookup=CatalogLookup(("public",), "R9"))
    with pytest.raises(ImageServiceUnavailable, match="catalog"):
        client.get(Caller("p", False, "t", catalog("http://g")), "x")


def test_unreachable_endpoint_is_retried_then_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client = glance_client(group(api_servers=[closed], num_retries=1))
    assert client is not None
    with pytest.raises(ImageServiceUnavailable):
        client.get(Caller("p", False, "t"), "x")
