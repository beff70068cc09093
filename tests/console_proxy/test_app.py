"""The proxy app's own rules without a cloud: where the token comes from, what an unknown
one gets, the base64 subprotocol, the noVNC files (and nothing outside their directory)."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from oslo_config import cfg
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from openkeel.cmd import preflight
from openkeel.cmd.console_proxy import RunningProxy, Tls, start_in_thread, tls_settings
from openkeel.conf import consoles
from openkeel.console_proxy.app import ConsoleProxyApp, request_token
from openkeel.db.repositories.console_auth_tokens import ConsoleAuthorization, ConsoleTarget
from tests.tls_certs import self_signed


class Echo:
    """A guest console: a TCP echo server on one thread."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return  # closed unused
        with conn:
            while data := conn.recv(4096):
                conn.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join()


class Tokens:
    def __init__(self, port: int) -> None:
        self.target = ConsoleTarget("serial", "127.0.0.1", port, "uuid", None, None, "ws://x/")

    def authorize(self, token: str) -> ConsoleAuthorization | None:
        return ConsoleAuthorization(self.target, 2**31) if token == "good" else None


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    yield server
    server.close()


@pytest.fixture
def proxy(echo: Echo, tmp_path: Path) -> Iterator[RunningProxy]:
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "vnc_lite.html").write_text("<html>noVNC</html>")
    (tmp_path / "secret.txt").write_text("no")
    app = ConsoleProxyApp(Tokens(echo.port), web=tmp_path / "web")  # type: ignore[arg-type]
    running = start_in_thread(app, "test-proxy", socket.create_server(("127.0.0.1", 0)))
    yield running
    running.stop()


def test_token_from_query_then_cookie() -> None:
    scope = {"query_string": b"token=q"}
    assert request_token(scope, {"cookie": "token=c"}) == "q"
    assert request_token({"query_string": b""}, {"cookie": "a=1; token=c"}) == "c"
    assert request_token({"query_string": b""}, {"cookie": "bad\x00=; token=c"}) == "c"
    assert request_token({"query_string": b""}, {}) == ""


def test_base64_subprotocol_and_cookie(proxy: RunningProxy, echo: Echo) -> None:
    url = proxy.url.replace("http", "ws") + "/"
    with connect(url, subprotocols=["base64"], additional_headers={"Cookie": "token=good"},  # type: ignore[list-item]
                 open_timeout=10) as ws:  # fmt: skip
        assert ws.subprotocol == "base64"
        ws.send("aGVsbG8=")  # hello
        assert ws.recv(timeout=10) == "aGVsbG8="


def test_unknown_token_is_refused(proxy: RunningProxy) -> None:
    with pytest.raises(InvalidStatus) as caught:
        connect(proxy.url.replace("http", "ws") + "/?token=bad", open_timeout=10)
    assert caught.value.response.status_code == 403


def test_novnc_files(proxy: RunningProxy) -> None:
    import httpx

    with httpx.Client(base_url=proxy.url) as http:
        page = http.get("/vnc_lite.html")
        assert (page.status_code, page.text) == (200, "<html>noVNC</html>")
        assert page.headers["content-type"] == "text/html"
        assert http.get("/../secret.txt").status_code == 404
        assert http.get("/%2e%2e/secret.txt").status_code == 404
        assert http.get("/missing.js").status_code == 404


def test_ssl_only_proxy_speaks_tls(echo: Echo, tmp_path: Path) -> None:
    """``[DEFAULT] ssl_only`` with ``cert``/``key``: wss:// through the proxy to the guest, and
    ``[console] ssl_minimum_version`` refuses an older client."""
    cert, key = self_signed(tmp_path)
    tls = Tls(str(cert), str(key), minimum_version="tlsv1_3")
    app = ConsoleProxyApp(Tokens(echo.port))  # type: ignore[arg-type]
    running = start_in_thread(app, "tls-proxy", socket.create_server(("127.0.0.1", 0)), tls)
    try:
        assert running.url.startswith("https://")
        client = ssl.create_default_context(cafile=str(cert))
        url = running.url.replace("https", "wss") + "/?token=good"
        with connect(url, ssl=client, open_timeout=10) as ws:
            ws.send(b"hello")
            assert ws.recv(timeout=10) == b"hello"
        old = ssl.create_default_context(cafile=str(cert))
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises(ssl.SSLError):
            connect(url, ssl=old, open_timeout=10)
    finally:
        running.stop()


def test_ssl_only_without_a_certificate_is_a_start_up_error(tmp_path: Path) -> None:
    conf = cfg.ConfigOpts()
    consoles.register(conf)
    conf([], default_config_files=[])
    assert tls_settings(conf) is None  # plain unless ssl_only
    conf.set_override("ssl_only", True)
    conf.set_override("cert", str(tmp_path / "missing.pem"))
    with pytest.raises(preflight.StartupError, match="ssl_only is set but the certificate"):
        tls_settings(conf)
