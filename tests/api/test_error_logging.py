"""Unexpected API errors: logged once with traceback, request id, user and project; lines a
handler writes on its worker thread carry the same request."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import NoAuth
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.request import ApiRequest
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.services import ApiServices
from openkeel.cmd.logs import ContextFormatter
from openkeel.conf.log import CONTEXT_FORMAT, DEFAULT_FORMAT
from openkeel.domain.errors import Conflict
from openkeel.logcontext import RequestContextFilter
from tests.client import ApiClient

LOG = logging.getLogger("tests.api.widgets")


def crash(req: ApiRequest) -> None:
    LOG.warning("about to fail")
    raise KeyError("boom")


def conflict(req: ApiRequest) -> None:
    raise Conflict("Widget 1 is busy.")


@pytest.fixture(params=[False, True], ids=["worker-thread", "on-the-loop"])
def client(request: pytest.FixtureRequest, services: ApiServices) -> Iterator[ApiClient]:
    table = RouteTable()
    table.add("DELETE", "/widgets/{id}", endpoint(crash, bounded=True))
    table.add("GET", "/widgets/{id}", endpoint(conflict))
    app = ComputeApiApp(
        table, NoAuth(), PolicyEnforcer(services.conf), services, inline_bounded=request.param
    )
    c = ApiClient(app)
    yield c
    c.close()


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.handler.addFilter(RequestContextFilter())
    caplog.set_level(logging.INFO)
    return caplog


def test_unexpected_error_is_logged_once_with_request_user_and_project(
    client: ApiClient, logs: pytest.LogCaptureFixture
) -> None:
    resp = client.delete("/v2.1/widgets/1", token="alice:proj-a")
    assert resp.status_code == 500
    request_id = resp.headers["x-openstack-request-id"]
    errors = [r for r in logs.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    error = errors[0]
    assert error.exc_info is not None and isinstance(error.exc_info[1], KeyError)
    assert (error.request_id, error.user_id, error.project_id) == (  # type: ignore[attr-defined]
        request_id,
        "alice",
        "proj-a",
    )
    assert "DELETE /v2.1/widgets/1" in error.getMessage()
    line = ContextFormatter(CONTEXT_FORMAT, DEFAULT_FORMAT, None).format(error)
    assert f"[{request_id} alice proj-a]" in line
    assert "Traceback (most recent call last)" in line and "KeyError: 'boom'" in line


def test_handler_lines_carry_the_request(client: ApiClient, logs: pytest.LogCaptureFixture) -> None:
    resp = client.delete("/v2.1/widgets/1", token="bob:proj-b")
    inside = [r for r in logs.records if r.name == LOG.name]
    assert len(inside) == 1
    assert inside[0].request_id == resp.headers["x-openstack-request-id"]  # type: ignore[attr-defined]
    assert inside[0].user_identity == "bob proj-b"  # type: ignore[attr-defined]


def test_expected_errors_are_not_logged_as_errors(
    client: ApiClient, logs: pytest.LogCaptureFixture
) -> None:
    assert client.get("/v2.1/widgets/1").status_code == 409
    assert client.get("/v2.1/no-such-thing").status_code == 404
    assert not [r for r in logs.records if r.levelno >= logging.ERROR]


def test_lines_outside_a_request_use_the_default_format() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "idle", None, None)
    RequestContextFilter().filter(record)
    line = ContextFormatter("CTX %(request_id)s %(message)s", "DEF %(message)s", None).format(
        record
    )
    assert line == "DEF idle"
