"""The unchanged ``openstack`` CLI against the all-in-one (issue 14): ``console url show``
for the noVNC and serial consoles, then a websocket through the all-in-one's own proxies to
the simulated guest (RFB greeting, serial log)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.sync.client import connect

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc


def _first_bytes(ws_url: str, size: int) -> bytes:
    with connect(ws_url, open_timeout=10, subprotocols=["binary"]) as ws:  # type: ignore[list-item]
        data = b""
        while len(data) < size:
            frame = ws.recv(timeout=10)
            assert isinstance(frame, bytes)
            data += frame
    return data[:size]


def test_console_urls_with_the_cli(cloud: RunningCloud) -> None:
    osc(cloud, "server", "create", "--image", "cirros-0.6.3-x86_64-disk",
        "--flavor", "m1.tiny", "--nic", "none", "--wait", "consoled")  # fmt: skip
    novnc: dict[str, Any] = osc(cloud, "console", "url", "show", "--novnc", "consoled")
    assert novnc["type"] == "novnc"
    page = urlsplit(novnc["url"])
    assert page.path == "/vnc_lite.html"
    websocket_path = parse_qs(page.query)["path"][0]  # "?token=...", as noVNC gets it
    assert _first_bytes(f"ws://{page.netloc}/{websocket_path}", 12) == b"RFB 003.008\n"
    serial: dict[str, Any] = osc(cloud, "console", "url", "show", "--serial", "consoled")
    assert serial["type"] == "serial" and serial["url"].startswith("ws://")
    assert _first_bytes(serial["url"], 19) == b"FAKE CONSOLE OUTPUT"
    osc(cloud, "server", "delete", "--wait", "consoled", "--no-output")
