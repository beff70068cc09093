"""A real all-in-one process on a free port, for end-to-end tests with real clients."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class RunningCloud:
    """An ``openkeel all-in-one`` started by the test session."""

    url: str
    data_dir: Path

    @property
    def clouds_yaml(self) -> Path:
        return self.data_dir / "clouds.yaml"

    @property
    def root(self) -> str:
        """``http://host:port``: the identity service is at ``root + "/identity"``."""
        return self.url.removesuffix("/v2.1")

    @property
    def admin_password(self) -> str:
        """What the all-in-one printed (and keeps in its data directory)."""
        return (self.data_dir / "admin-password").read_text().strip()

    def token(
        self, user: str = "admin", password: str | None = None, project: str = "admin"
    ) -> str:
        """A token from the embedded identity service, as any Keystone client logs in."""
        body = {
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {
                        "user": {
                            "name": user,
                            "domain": {"id": "default"},
                            "password": password or self.admin_password,
                        }
                    },
                },
                "scope": {"project": {"name": project, "domain": {"id": "default"}}},
            }
        }
        request = urllib.request.Request(
            f"{self.root}/identity/v3/auth/tokens?nocatalog",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            return str(resp.headers["X-Subject-Token"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"all-in-one exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)  # polling a process we started, bounded by the deadline
    raise TimeoutError(f"all-in-one did not answer at {url}")


@contextmanager
def all_in_one(
    data_dir: Path, *extra_args: str, boot_timeout: float = 60
) -> Iterator[RunningCloud]:
    """Run ``openkeel all-in-one`` on a free port (plus ``extra_args``) until the block ends."""
    port = _free_port()
    log = (data_dir / "aio.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "openkeel.cmd.main",
            "all-in-one",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
            *extra_args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    url = f"http://127.0.0.1:{port}/v2.1"
    try:
        _wait_until_up(url + "/", proc, time.monotonic() + boot_timeout)
        yield RunningCloud(url, data_dir)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCloud]:
    with all_in_one(tmp_path_factory.mktemp("aio")) as running:
        yield running
