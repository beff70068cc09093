"""The console proxy to a KubeVirt guest: the VMI's ``vnc`` subresource websocket reached with
the kubeconfig's credentials and the ``plain.kubevirt.io`` subprotocol, relayed byte for byte.
The API server is a stand-in speaking virt-api's websocket (the test cluster has no virt-api)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from websockets.exceptions import InvalidStatus
from websockets.http11 import Request, Response
from websockets.sync.client import connect
from websockets.sync.server import Server, ServerConnection, serve

from openkeel.cmd.console_proxy import RunningProxy, start_in_thread
from openkeel.console_proxy.app import ConsoleProxyApp
from openkeel.db.repositories.console_auth_tokens import ConsoleAuthorization, ConsoleTarget
from openkeel.virt.kubevirt.client import KubeConfig
from openkeel.virt.kubevirt.console_stream import KubevirtConsoleOpener
from openkeel.virt.kubevirt.virtapi import subresource_path

PATH = subresource_path("tenant-ns", "virtualmachineinstances", "vm-1", "vnc")


def _authorize(conn: ServerConnection, request: Request) -> Response | None:
    """The API server's answer to a wrong path or credential: 403 before any websocket."""
    if request.path != PATH or request.headers.get("Authorization") != "Bearer secret":
        return conn.respond(403, "Forbidden")
    return None


def _virt_api(ws: ServerConnection) -> None:
    assert ws.subprotocol == "plain.kubevirt.io"
    ws.send(b"RFB 003.008\n")
    for message in ws:
        ws.send(message)


@pytest.fixture
def api_server() -> Iterator[Server]:
    server = serve(
        _virt_api, "127.0.0.1", 0, subprotocols=["plain.kubevirt.io"], process_request=_authorize
    )  # type: ignore[list-item]
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield server
    server.shutdown()
    thread.join()


class Tokens:
    def __init__(self, port: int, path: str) -> None:
        self.target = ConsoleTarget("novnc", "127.0.0.1", port, "uuid", path, None, "http://p/")

    def authorize(self, token: str) -> ConsoleAuthorization | None:
        return ConsoleAuthorization(self.target, 2**31) if token == "good" else None


def _proxy(api: Server, token: str, path: str) -> RunningProxy:
    port = api.socket.getsockname()[1]
    opener = KubevirtConsoleOpener(KubeConfig(server=f"http://127.0.0.1:{port}", token=token))
    app = ConsoleProxyApp(Tokens(port, path), opener=opener)  # type: ignore[arg-type]
    return start_in_thread(app, "kubevirt-proxy", socket.create_server(("127.0.0.1", 0)))


def test_vnc_subresource_through_the_proxy(api_server: Server) -> None:
    proxy = _proxy(api_server, "secret", PATH)
    try:
        url = proxy.url.replace("http", "ws") + "/?token=good"
        with connect(url, open_timeout=10, subprotocols=["binary"]) as ws:  # type: ignore[list-item]
            assert ws.recv(timeout=10) == b"RFB 003.008\n"
            ws.send(b"RFB 003.008\n")
            assert ws.recv(timeout=10) == b"RFB 003.008\n"
    finally:
        proxy.stop()


def test_refused_subresource_refuses_the_console(api_server: Server) -> None:
    proxy = _proxy(api_server, "wrong", PATH)
    try:
        with pytest.raises(InvalidStatus) as caught:
            connect(proxy.url.replace("http", "ws") + "/?token=good", open_timeout=10)
        assert caught.value.response.status_code == 403
    finally:
        proxy.stop()
