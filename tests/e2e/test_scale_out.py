"""The same code scaled out: api, conductor, scheduler and compute as four processes talking
over RabbitMQ, with PostgreSQL databases and Placement over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.db import cells, migrate
from openkeel.db.engine import make_engine
from tests.db.backends import DatabaseFactory, database_factory
from tests.e2e.conftest import _free_port

__all__ = ["database_factory"]
IMAGE = "f889e72b-5f7e-546f-a852-ffb79bfbb64f"


def _require_rabbit() -> None:
    try:
        socket.create_connection(("127.0.0.1", 5672), timeout=1).close()
    except OSError:
        message = "RabbitMQ not reachable at 127.0.0.1:5672 — start it (rabbitmq-server -detached)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _nova_conf(path: Path, **sections: dict[str, str]) -> Path:
    lines = []
    for section, values in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def scaled_out(tmp_path: Path, database_factory: DatabaseFactory) -> Iterator[str]:
    _require_rabbit()
    urls = {n: database_factory.url("postgresql", f"so_{n}") for n in ("api", "cell0", "cell1")}
    for name, url in urls.items():
        engine = make_engine(url)
        migrate.upgrade(engine, "api" if name == "api" else "cell")
        engine.dispose()
    transport = "rabbit://guest:guest@127.0.0.1:5672/"
    api_db = make_engine(urls["api"])
    cells.map_cell0(api_db, urls["cell0"])
    cells.create_cell(
        api_db, name="cell1", transport_url=transport, database_connection=urls["cell1"]
    )
    api_db.dispose()
    placement = EmbeddedPlacement(tmp_path / "placement").start()
    port = _free_port()
    conf = _nova_conf(
        tmp_path / "nova.conf",
        DEFAULT={"transport_url": transport, "host": f"so-{uuid.uuid4().hex[:6]}",
                 "control_exchange": f"openkeel_test_{uuid.uuid4().hex[:8]}",
                 "osapi_compute_listen_port": str(port)},
        api={"auth_strategy": "noauth2"},
        api_database={"connection": urls["api"]},
        database={"connection": urls["cell1"]},
        placement={"endpoint_override": placement.serve_http(), "auth_type": "admin_token",
                   "token": "admin"},
    )  # fmt: skip
    procs = []
    logs = []
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for role in ("scheduler", "conductor", "compute", "api"):
        log = (tmp_path / f"{role}.log").open("wb")
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "openkeel.cmd.main", role, "--config-file", str(conf)],
            stdout=log, stderr=subprocess.STDOUT, env=env))  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/v2.1/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    logs = {p: (tmp_path / f"{p}.log").read_text()[-2000:]
                            for p in ("scheduler", "conductor", "compute", "api")}  # fmt: skip
                    raise AssertionError(f"roles did not come up: {logs}") from None
                time.sleep(0.2)  # polling processes we started, bounded by the deadline
        yield url
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
        for log in logs:
            log.close()
        placement.stop()


def test_boot_and_delete_across_processes(scaled_out: str) -> None:
    with httpx.Client(
        base_url=scaled_out, headers={"X-Auth-Token": "admin:admin"}, timeout=30
    ) as api:
        _boot_and_delete(api)


def _boot_and_delete(api: httpx.Client) -> None:
    flavor = {"flavor": {"name": "so.tiny", "ram": 256, "vcpus": 1, "disk": 1, "id": "so1"}}
    assert api.post("/v2.1/flavors", json=flavor).status_code == 200
    deadline = time.monotonic() + 60
    while not api.get("/v2.1/os-hypervisors").json()["hypervisors"]:  # compute registers
        assert time.monotonic() < deadline, "compute host never registered"
        time.sleep(0.2)
    body = {"server": {"name": "far", "imageRef": IMAGE, "flavorRef": "so1", "networks": "none"}}
    created = api.post(
        "/v2.1/servers", json=body, headers={"OpenStack-API-Version": "compute 2.37"}
    )
    assert created.status_code == 202, created.text
    server_id = created.json()["server"]["id"]
    while True:
        server = api.get(f"/v2.1/servers/{server_id}").json()["server"]
        if server["status"] != "BUILD":
            break
        assert time.monotonic() < deadline, server
        time.sleep(0.1)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert api.delete(f"/v2.1/servers/{server_id}").status_code == 204
    while api.get(f"/v2.1/servers/{server_id}").status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)
