"""The console proxies end to end: a websocket client through the proxy to the simulated
guest's serial line and VNC server (RFB handshake), and refused with an unknown, expired,
stale (guest's console moved) or deleted server's token, or a foreign Origin."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy as sa
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from openkeel.cmd.console_proxy import RunningProxy, proxy_app, start_in_thread
from openkeel.db.schema import cell as cell_schema
from openkeel.rpc.clients.compute import ComputeRpcClient
from tests.functional.conftest import Cloud


@pytest.fixture
def proxy(cloud: Cloud) -> Iterator[RunningProxy]:
    conf = cloud.services.conf
    conf.set_override("enabled", True, group="serial_console")
    sock = socket.create_server(("127.0.0.1", 0))
    compute = ComputeRpcClient(cloud.roles.transport)
    app = proxy_app(conf, "serialproxy", cloud.services.cell_dbs, compute)
    running = start_in_thread(app, "proxy", sock)
    yield running
    running.stop()


def _url(cloud: Cloud, sid: str, protocol: str, kind: str) -> str:
    resp = cloud.api.post(
        f"/v2.1/servers/{sid}/remote-consoles",
        {"remote_console": {"protocol": protocol, "type": kind}},
        token="admin:admin", version="2.6",
    )  # fmt: skip
    assert resp.status_code == 200, resp.text
    return str(resp.json()["remote_console"]["url"])


def _token(url: str) -> str:
    query = parse_qs(urlsplit(url).query)
    if "path" in query:  # noVNC: the token rides in the websocket path
        query = parse_qs(urlsplit(query["path"][0]).query)
    return query["token"][0]


def _open(proxy: RunningProxy, token: str, **kwargs: object) -> ClientConnection:
    ws_url = proxy.url.replace("http://", "ws://") + f"/?token={token}"
    return connect(ws_url, open_timeout=10, **kwargs)  # type: ignore[arg-type]


_PENDING: dict[int, bytes] = {}


def _read(ws: ClientConnection, size: int) -> bytes:
    """Exactly ``size`` bytes of the stream (frames do not follow the guest's writes)."""
    data = _PENDING.pop(id(ws), b"")
    while len(data) < size:
        frame = ws.recv(timeout=10)
        assert isinstance(frame, bytes)
        data += frame
    _PENDING[id(ws)] = data[size:]
    return data[:size]


def _refused(proxy: RunningProxy, token: str, **kwargs: object) -> None:
    with pytest.raises(InvalidStatus) as caught:
        _open(proxy, token, **kwargs)
    assert caught.value.response.status_code == 403


@pytest.fixture
def server(cloud: Cloud) -> str:
    sid = str(cloud.boot("console")["id"])
    assert cloud.wait(sid)["status"] == "ACTIVE"
    return sid


def test_serial_console_through_the_proxy(cloud: Cloud, proxy: RunningProxy, server: str) -> None:
    token = _token(_url(cloud, server, "serial", "serial"))
    _PENDING.clear()
    log = cloud.api.post(f"/v2.1/servers/{server}/action", {"os-getConsoleOutput": {}})
    so_far = log.json()["output"].replace("\n", "\r\n").encode()
    assert so_far.startswith(b"FAKE CONSOLE OUTPUT\r\n")
    with _open(proxy, token, subprotocols=["binary"]) as ws:
        assert ws.subprotocol == "binary"
        assert _read(ws, len(so_far)) == so_far  # the console log, then the live line
        ws.send(b"echo hello\r")
        assert _read(ws, 11) == b"echo hello\r"
    # Nova's tokens open the console until they expire, not once.
    _PENDING.clear()
    with _open(proxy, token) as ws:
        assert _read(ws, 4) == b"FAKE"


def test_vnc_console_through_the_proxy(cloud: Cloud, proxy: RunningProxy, server: str) -> None:
    token = _token(_url(cloud, server, "vnc", "novnc"))
    origin = proxy.url  # the page the proxy itself served
    with _open(proxy, token, subprotocols=["binary"], origin=origin) as ws:
        assert _read(ws, 12) == b"RFB 003.008\n"
        ws.send(b"RFB 003.008\n")
        assert _read(ws, 2) == b"\x01\x01"  # one security type: None
        ws.send(b"\x01")
        assert _read(ws, 4) == b"\x00\x00\x00\x00"
        ws.send(b"\x01")  # ClientInit, shared
        width, height = struct.unpack(">HH", _read(ws, 4))
        assert (width, height) == (64, 48)
        _read(ws, 16)  # pixel format
        (length,) = struct.unpack(">I", _read(ws, 4))
        assert _read(ws, length) == b"console"
        ws.send(struct.pack(">BBHHHH", 3, 0, 0, 0, width, height))
        header = _read(ws, 16)
        assert struct.unpack(">BxHHHHHi", header) == (0, 1, 0, 0, 64, 48, 0)


def test_refusals(cloud: Cloud, proxy: RunningProxy, server: str) -> None:
    _refused(proxy, "")
    _refused(proxy, "not-a-token")
    token = _token(_url(cloud, server, "serial", "serial"))
    _refused(proxy, token, origin="http://evil.example.com")
    _refused(proxy, token, origin="https://127.0.0.1")  # the URL said ws://, so http only
    cloud.services.conf.set_override("allowed_origins", ["evil.example.com"], group="console")
    app_conf_unchanged = proxy  # the proxy read allowed_origins at start: still refused
    _refused(app_conf_unchanged, token, origin="http://evil.example.com")
    (cell,) = [e for u, e in cloud.services.cell_dbs.items() if not u.startswith("00000000")]
    table = cell_schema.console_auth_tokens
    with cell.begin() as conn:
        conn.execute(sa.update(table).values(expires=1))
    _refused(proxy, token)  # expired
    fresh = _token(_url(cloud, server, "serial", "serial"))
    (service,) = cloud.computes.values()
    service.host.driver.consoles.close(server)  # the guest's console now listens elsewhere
    _refused(proxy, fresh)
    again = _token(_url(cloud, server, "serial", "serial"))
    with _open(proxy, again) as ws:
        assert _read(ws, 4) == b"FAKE"
    assert cloud.api.delete(f"/v2.1/servers/{server}", token="admin:admin").status_code == 204
    cloud.wait(server, gone=True)
    _refused(proxy, again)  # deleted with its server
