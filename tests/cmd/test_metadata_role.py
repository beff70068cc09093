"""The metadata service as operators start it: under ``/metadata`` of the all-in-one, and as
``openkeel metadata --config-file`` on its own port over the same databases."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from openkeel.domain.guest_metadata.versions import EC2_VERSIONS
from openkeel.metadata.identify import signature
from tests.cmd.processes import AllInOne, openkeel_command


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(url: str, deadline: float) -> httpx.Response:
    while True:
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)  # the process is starting; bounded by the deadline


def test_all_in_one_and_metadata_role_serve_metadata(tmp_path: Path) -> None:
    with AllInOne(tmp_path / "aio") as aio:
        root = aio.url.removesuffix("/v2.1")
        listing = httpx.get(f"{root}/metadata/", timeout=10)
        assert (listing.status_code, listing.text.split("\n")) == (200, [*EC2_VERSIONS, "latest"])
        # No server has 127.0.0.1 as its fixed IP.
        assert httpx.get(f"{root}/metadata/openstack/latest", timeout=10).status_code == 404
        assert httpx.get(f"{root}/v2.1/", timeout=10).status_code in (200, 401)

        port = _free_port()
        conf = tmp_path / "metadata.conf"
        conf.write_text(
            f"[DEFAULT]\nmetadata_listen = 127.0.0.1\nmetadata_listen_port = {port}\n"
            f"[api_database]\nconnection = sqlite:///{tmp_path / 'aio' / 'nova_api.sqlite'}\n"
            "[neutron]\nservice_metadata_proxy = true\nmetadata_proxy_shared_secret = s\n"
        )
        role = subprocess.Popen(openkeel_command("metadata", "--config-file", str(conf)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            assert _wait_for(f"{base}/", time.monotonic() + 60).status_code == 200
            ghost = "00000000-0000-4000-8000-000000000000"
            signed = {"X-Instance-ID": ghost, "X-Tenant-ID": "p",
                      "X-Instance-ID-Signature": signature("s", ghost)}  # fmt: skip
            assert httpx.get(f"{base}/openstack/latest", headers=signed).status_code == 404
            forged = {**signed, "X-Instance-ID-Signature": signature("other", ghost)}
            assert httpx.get(f"{base}/openstack/latest", headers=forged).status_code == 403
        finally:
            role.send_signal(signal.SIGINT)
            try:
                role.wait(timeout=30)
            except subprocess.TimeoutExpired:
                role.kill()
                role.wait()
            assert role.stderr is not None
            role.stderr.close()
