"""The same code scaled out: api, conductor, scheduler and compute as four processes talking
over RabbitMQ, with PostgreSQL databases and Placement over HTTP."""

from __future__ import annotations

import contextlib
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
ADMIN_PASSWORD = "scale-out-admin"


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


@contextlib.contextmanager
def _deployment(
    tmp_path: Path, database_factory: DatabaseFactory, auth_strategy: str, apis: int = 1
) -> Iterator[list[str]]:
    """Scheduler, conductor, compute and ``apis`` API processes; the API URLs."""
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
    ports = [_free_port() for _ in range(apis)]
    common = {
        "api": {"auth_strategy": auth_strategy},
        "api_database": {"connection": urls["api"]},
        "database": {"connection": urls["cell1"]},
        "placement": {"endpoint_override": placement.serve_http(), "auth_type": "admin_token",
                      "token": "admin"},
    }  # fmt: skip
    if auth_strategy == "embedded":  # revocations seen by every process at once
        common["identity"] = {"token_cache_time": "0"}
    default = {"transport_url": transport, "host": f"so-{uuid.uuid4().hex[:6]}",
               "control_exchange": f"openkeel_test_{uuid.uuid4().hex[:8]}"}  # fmt: skip
    confs = [
        _nova_conf(tmp_path / f"nova-{i}.conf",
                   DEFAULT={**default, "osapi_compute_listen_port": str(port)}, **common)
        for i, port in enumerate(ports)
    ]  # fmt: skip
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    if auth_strategy == "embedded":  # keystone-manage bootstrap, once for every API process
        subprocess.run(
            [sys.executable, "-m", "openkeel.cmd.main", "manage", "--config-file", str(confs[0]),
             "identity", "bootstrap", "--bootstrap-password", ADMIN_PASSWORD],
            env=env, check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    roles = [("scheduler", confs[0]), ("conductor", confs[0]), ("compute", confs[0])]
    roles += [(f"api-{i}", conf) for i, conf in enumerate(confs)]
    procs, logs = [], []
    for name, conf in roles:
        log = (tmp_path / f"{name}.log").open("wb")
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "openkeel.cmd.main", name.split("-")[0], "--config-file",
             str(conf)], stdout=log, stderr=subprocess.STDOUT, env=env))  # fmt: skip
    api_urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        deadline = time.monotonic() + 60
        for url in api_urls:
            while True:
                try:
                    urllib.request.urlopen(url + "/v2.1/", timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                        tails = {n: (tmp_path / f"{n}.log").read_text()[-2000:] for n, _ in roles}
                        raise AssertionError(f"roles did not come up: {tails}") from None
                    time.sleep(0.2)  # polling processes we started, bounded by the deadline
        yield api_urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
        for log in logs:
            log.close()
        placement.stop()


@pytest.fixture
def scaled_out(tmp_path: Path, database_factory: DatabaseFactory) -> Iterator[str]:
    with _deployment(tmp_path, database_factory, "noauth2") as urls:
        yield urls[0]


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
        shown = api.get(f"/v2.1/servers/{server_id}")
        assert shown.status_code == 200, f"GET of the new server: {shown.status_code} {shown.text}"
        server = shown.json()["server"]
        if server["status"] != "BUILD":
            break
        assert time.monotonic() < deadline, server
        time.sleep(0.1)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert api.delete(f"/v2.1/servers/{server_id}").status_code == 204
    while api.get(f"/v2.1/servers/{server_id}").status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)


def _login(url: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": ADMIN_PASSWORD}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}  # fmt: skip
    resp = httpx.post(f"{url}/identity/v3/auth/tokens", json=body, timeout=30)
    assert resp.status_code == 201, resp.text
    return str(resp.headers["X-Subject-Token"])


def test_embedded_identity_shared_by_two_api_processes(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    """A token from one API process is good at the other (keys in the API database), and a
    revocation made through one is seen by the other (here at once: no token cache)."""
    with _deployment(tmp_path, database_factory, "embedded", apis=2) as (first, second):
        token = _login(first)
        with httpx.Client(base_url=second, headers={"X-Auth-Token": token}, timeout=30) as api:
            _boot_and_delete(api)
            catalog = api.get("/identity/v3/auth/catalog").json()["catalog"]
            compute = next(s for s in catalog if s["type"] == "compute")
            assert compute["endpoints"][0]["url"] == f"{second}/v2.1"
        assert httpx.get(f"{second}/v2.1/servers", timeout=30).status_code == 401
        revoked = httpx.delete(
            f"{first}/identity/v3/auth/tokens",
            timeout=30,
            headers={"X-Auth-Token": token, "X-Subject-Token": token},
        )
        assert revoked.status_code == 204
        after = httpx.get(f"{second}/v2.1/servers", headers={"X-Auth-Token": token}, timeout=30)
        assert after.status_code == 401
