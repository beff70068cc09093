"""Storage problems answer a 503 that names them, are logged once, and pass without a restart:
a full SQLite database (the real "database or disk is full", from ``max_page_count``), ENOSPC,
and an unreachable PostgreSQL or MySQL server."""

from __future__ import annotations

import errno
import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import NoAuth
from openkeel.api.factory import build_api_app
from openkeel.api.faults import fault_for
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.request import ApiRequest
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.services import ApiServices
from openkeel.db.engine import make_engine
from openkeel.logcontext import RequestContextFilter
from openkeel.rpc.errors import RemoteError
from tests.client import ApiClient

STORAGE_FULL = {
    "serviceUnavailable": {
        "code": 503,
        "message": "The compute service's storage is full; retry later.",
    }
}
DATABASE_UNAVAILABLE = {
    "serviceUnavailable": {
        "code": 503,
        "message": "The compute service's database is unavailable; retry later.",
    }
}
# Nothing listens on port 1: the connection is refused at once, as with a stopped server.
DEAD_SERVERS = {
    "postgresql": "postgresql+psycopg2://openkeel@127.0.0.1:1/nova_api",
    "mysql": "mysql+pymysql://root@127.0.0.1:1/nova_api",
}


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.handler.addFilter(RequestContextFilter())
    caplog.set_level(logging.INFO)
    return caplog


def _errors(logs: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in logs.records if r.levelno >= logging.ERROR]


@contextmanager
def page_cap(engine: sa.Engine) -> Iterator[None]:
    """Inside: the database file may not grow (``max_page_count`` = its size now)."""
    with engine.connect() as conn:
        limit = conn.exec_driver_sql("PRAGMA page_count").scalar_one()

    def cap(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {limit}")

    sa.event.listen(engine, "connect", cap)
    engine.dispose()
    try:
        yield
    finally:
        sa.event.remove(engine, "connect", cap)
        engine.dispose()  # the capped connections go; new ones have no cap


def _flavor(name: str) -> dict[str, Any]:
    return {"flavor": {"name": name, "ram": 512, "vcpus": 1, "disk": 1, "description": "d" * 60000}}


def test_full_sqlite_database_is_a_503_logged_once_then_recovers(
    api: ApiClient, services: ApiServices, logs: pytest.LogCaptureFixture
) -> None:
    with page_cap(services.api_db):
        resp = api.post("/v2.1/flavors", _flavor("big"), version="2.55")
    assert (resp.status_code, resp.json()) == (503, STORAGE_FULL)
    errors = _errors(logs)
    assert len(errors) == 1
    assert errors[0].exc_info is not None
    assert "database or disk is full" in str(errors[0].exc_info[1])
    assert errors[0].request_id == resp.headers["x-openstack-request-id"]  # type: ignore[attr-defined]

    resp = api.post("/v2.1/flavors", _flavor("big"), version="2.55")
    assert resp.status_code == 200, resp.text


def no_space(req: ApiRequest) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def dead_database(req: ApiRequest) -> None:
    engine = make_engine(DEAD_SERVERS[req.params["backend"]])
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    finally:
        engine.dispose()


@pytest.fixture
def client(services: ApiServices) -> Iterator[ApiClient]:
    table = RouteTable()
    table.add("POST", "/disk", endpoint(no_space))
    table.add("GET", "/databases/{backend}", endpoint(dead_database))
    c = ApiClient(ComputeApiApp(table, NoAuth(), PolicyEnforcer(services.conf), services))
    yield c
    c.close()


def test_enospc_is_a_503_logged_once(client: ApiClient, logs: pytest.LogCaptureFixture) -> None:
    resp = client.post("/v2.1/disk", {})
    assert (resp.status_code, resp.json()) == (503, STORAGE_FULL)
    assert len(_errors(logs)) == 1


@pytest.mark.parametrize("backend", sorted(DEAD_SERVERS))
def test_unreachable_database_server_is_a_503(
    client: ApiClient, logs: pytest.LogCaptureFixture, backend: str
) -> None:
    resp = client.get(f"/v2.1/databases/{backend}")
    assert (resp.status_code, resp.json()) == (503, DATABASE_UNAVAILABLE)
    assert "Traceback" not in resp.text
    assert len(_errors(logs)) == 1


def test_unreachable_api_database_behind_a_real_route(
    services: ApiServices, logs: pytest.LogCaptureFixture
) -> None:
    dead = make_engine(DEAD_SERVERS["postgresql"])
    down = ApiServices(conf=services.conf, api_db=dead, cell_dbs={})
    c = ApiClient(build_api_app(down))
    try:
        resp = c.get("/v2.1/flavors/1")
    finally:
        c.close()
        dead.dispose()
    assert (resp.status_code, resp.json()) == (503, DATABASE_UNAVAILABLE)
    assert len(_errors(logs)) == 1


def test_a_remote_role_out_of_space_is_named() -> None:
    remote = RemoteError("OperationalError", "(sqlite3.OperationalError) database or disk is full")
    assert fault_for(remote).status == 503
    assert fault_for(RemoteError("KeyError", "'x'")).status == 500


def test_other_database_errors_stay_opaque_500s() -> None:
    exc = sa.exc.OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: x"))
    fault = fault_for(exc)
    assert fault.status == 500
    assert "no such table" not in fault.message


def test_busy_database_is_a_503() -> None:
    pool = sa.exc.TimeoutError("QueuePool limit of size 5 overflow 10 reached")
    assert (fault_for(pool).status, fault_for(pool).body()) == (503, _body(DATABASE_UNAVAILABLE))
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = 5  # type: ignore[attr-defined]  # as sqlite3 sets it
    assert fault_for(sa.exc.OperationalError("UPDATE", {}, locked)).status == 503


def _body(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()
