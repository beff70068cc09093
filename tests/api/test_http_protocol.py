"""The API under real uvicorn: what the HTTP parser refuses (an over-long URL) is answered with
Nova's JSON fault and a request id too, like everything the app answers."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from openkeel.api.services import ApiServices
from openkeel.cmd.api import api_server
from openkeel.runtime.shutdown import ShutdownSignals

DEADLINE = 10.0


def _exchange(address: tuple[str, int], request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` on a fresh connection; the status, headers and body of the answer."""
    with socket.create_connection(address, timeout=DEADLINE) as conn:
        conn.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < _expected(data):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def _expected(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(head) + 4 + int(line.split(b":")[1])
    return len(data) + 1


@pytest.fixture
def address(services: ApiServices) -> Iterator[tuple[str, int]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    signals = ShutdownSignals(graceful=10, manager=5)  # not installed: the test stops it
    server = api_server(services, "127.0.0.1", listener.getsockname()[1], signals=signals)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]})
    thread.start()
    deadline = time.monotonic() + DEADLINE
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the start flag, bounded by the deadline
    try:
        assert server.started
        yield listener.getsockname()
    finally:
        server.should_exit = True
        thread.join(DEADLINE)
        listener.close()


def _get(path: bytes) -> bytes:
    return b"GET " + path + b" HTTP/1.1\r\nHost: api\r\nX-Auth-Token: admin:admin\r\n\r\n"


def test_over_long_url_is_a_json_400_with_a_request_id(address: tuple[str, int]) -> None:
    status, headers, body = _exchange(address, _get(b"/v2.1/servers/" + b"a" * 70000))
    assert status == 400
    assert headers["content-type"] == "application/json; charset=UTF-8"
    assert json.loads(body) == {
        "badRequest": {"code": 400, "message": "Invalid HTTP request received."}
    }
    assert headers["x-openstack-request-id"].startswith("req-")
    assert headers["x-compute-request-id"] == headers["x-openstack-request-id"]


def test_unknown_path_through_uvicorn_is_a_json_404(address: tuple[str, int]) -> None:
    status, headers, body = _exchange(address, _get(b"/v2.1/" + b"z" * 10000))
    assert status == 404
    assert json.loads(body)["itemNotFound"]["code"] == 404
    assert headers["x-openstack-request-id"].startswith("req-")
