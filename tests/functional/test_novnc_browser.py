"""noVNC in headless Chromium through the noVNC proxy to the simulated guest's VNC server.

Needs Chromium (Debian: ``apt-get install chromium``) and noVNC's library (the ``@novnc/novnc``
npm package: ``OPENKEEL_NOVNC_DIR``, else ``npm pack`` into the test's directory). Skipped with
the reason when either is missing, failed instead under CI=true. The page's final DOM must say
"Connected" (noVNC's ``connect`` event: RFB handshake and ServerInit done); its screenshot is
kept in ``OPENKEEL_TEST_ARTIFACTS`` (default: the test's directory).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from openkeel.cmd.console_proxy import RunningProxy, proxy_app, start_in_thread
from openkeel.rpc.clients.compute import ComputeRpcClient
from tests.functional.conftest import Cloud

NOVNC = "@novnc/novnc@1.7.0"


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (required under CI)")
    pytest.skip(what)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    _missing("Chromium is not installed (Debian: apt-get install chromium)")
    raise AssertionError("unreachable")


def _novnc(tmp: Path) -> Path:
    given = os.environ.get("OPENKEEL_NOVNC_DIR")
    if given:
        return Path(given)
    npm = shutil.which("npm")
    if npm is None:
        _missing("npm is not installed to fetch noVNC (or set OPENKEEL_NOVNC_DIR)")
    done = subprocess.run([str(npm), "pack", NOVNC], cwd=tmp, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    if done.returncode != 0:
        _missing(f"npm pack {NOVNC} failed: {done.stderr.strip()[-200:]}")
    with tarfile.open(tmp / done.stdout.strip().splitlines()[-1]) as archive:
        archive.extractall(tmp, filter="data")
    return tmp / "package"


@pytest.fixture
def novnc_proxy(cloud: Cloud, tmp_path: Path) -> Iterator[RunningProxy]:
    conf = cloud.services.conf
    conf.set_override("web", str(_novnc(tmp_path)))
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    conf.set_override("novncproxy_base_url", f"http://127.0.0.1:{port}/vnc_lite.html", "vnc")
    app = proxy_app(conf, "novncproxy", cloud.services.cell_dbs,
                    ComputeRpcClient(cloud.roles.transport))  # fmt: skip
    running = start_in_thread(app, "novncproxy", sock)
    yield running
    running.stop()


class Browser:
    """Headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, binary: str, profile: Path) -> None:
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=640,480",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            assert time.monotonic() < deadline, "Chromium did not start"
            time.sleep(0.1)  # waiting for a process to start, bounded by the deadline
        port = port_file.read_text().split()[0]
        pages = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        page = next(p for p in pages if p["type"] == "page")
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(
            connect(page["webSocketDebuggerUrl"], open_timeout=10, max_size=None)
        )
        self.ids = 0

    def send(self, method: str, **params: Any) -> Any:
        self.ids += 1
        self.ws.send(json.dumps({"id": self.ids, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv(timeout=30))
            if reply.get("id") == self.ids:
                assert "error" not in reply, reply
                return reply["result"]

    def text_of(self, selector: str) -> str:
        expression = f"document.querySelector({json.dumps(selector)})?.textContent ?? ''"
        return str(self.send("Runtime.evaluate", expression=expression)["result"]["value"])

    def close(self) -> None:
        self._stack.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def test_novnc_connects_in_chromium(
    cloud: Cloud, novnc_proxy: RunningProxy, tmp_path: Path
) -> None:
    binary = _chromium()
    sid = cloud.boot("browser")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    resp = cloud.api.post(f"/v2.1/servers/{sid}/remote-consoles",
                          {"remote_console": {"protocol": "vnc", "type": "novnc"}},
                          token="admin:admin", version="2.6")  # fmt: skip
    url = resp.json()["remote_console"]["url"]
    artifacts = Path(os.environ.get("OPENKEEL_TEST_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    browser = Browser(binary, tmp_path / "profile")
    try:
        browser.send("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while (status := browser.text_of("#status")) != "Connected":
            assert status != "Something went wrong" and time.monotonic() < deadline, status
            time.sleep(0.2)  # the page connects on its own; polled with a deadline
        shot = browser.send("Page.captureScreenshot", format="png")["data"]
        (artifacts / "novnc-console.png").write_bytes(base64.b64decode(shot))
        assert (
            browser.send("Runtime.evaluate", expression="document.title")["result"]["value"]
            == "browser"
        )
    finally:
        browser.close()
