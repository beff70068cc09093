"""pkgcloud (Node.js), unchanged, logs in through the embedded identity service's
``/v3/auth/tokens`` and runs its server workflow against a fresh all-in-one.

Needs Node.js and npm (the machine's; pkgcloud from the npm registry, installed once into
``.venv/pkgcloud``). Without them the test skips locally and fails under CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.e2e.conftest import RunningCloud

HERE = Path(__file__).with_name("pkgcloud")
PREFIX = Path(sys.prefix) / "pkgcloud"


def _node_modules() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("Node.js and npm are needed for the pkgcloud test (apt install nodejs npm)")
        pytest.skip("Node.js and npm are not installed (apt install nodejs npm)")
    modules = PREFIX / "node_modules"
    if not (modules / "pkgcloud" / "package.json").exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / "package.json", PREFIX / "package.json")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(PREFIX)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    return modules


def test_pkgcloud_server_workflow(cloud: RunningCloud) -> None:
    modules = _node_modules()
    done = subprocess.run(
        ["node", str(HERE / "server_workflow.js"), f"{cloud.root}/identity",
         cloud.admin_password, DEFAULT_IMAGE.id],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:3] == ["status RUNNING", "listed true", "destroyed"]
