"""Checks the conformance machinery itself: oracles agree with Nova's samples, plugin fails.

Nova's API samples are real Nova output, so each must pass Nova's schema and tempest's for
the route and microversion the oracles pick: this proves the route/version mapping. The
checker must also reject a wrong body, a wrong status and a malformed fault.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conformance import nova_oracle, response_check, tempest_oracle
from tests.conformance.sample_catalog import Case, all_cases, load

CASES = all_cases()


def _operation(case: Case) -> tuple[nova_oracle.Operation, nova_oracle.Version]:
    mount, rest = response_check.split_mount(urlsplit(case.path).path)
    special = "<root>" if mount is None else "<version-document>"
    template = special if mount is None or rest in ("", "/") else rest
    body = case.body
    action = next(iter(body)) if isinstance(body, dict) and rest.endswith("/action") else None
    op = nova_oracle.find(case.method, template, action)
    assert op is not None, case.path
    version = nova_oracle.LEGACY if mount == "v2" else nova_oracle.parse_version(case.version)
    return op, version or (2, 1)


@pytest.mark.parametrize("case", CASES, ids=[c.resp for c in CASES])
def test_nova_sample_passes_both_oracles(case: Case) -> None:
    op, version = _operation(case)
    body = load(case.resp)
    status = op.success_code(version)
    verdict = nova_oracle.check_response(op, version, status, body)
    assert verdict.checked and verdict.errors == ()
    schema = tempest_oracle.schema_for(op.method, op.template, op.action, version)
    if schema is not None:
        lenient = tempest_oracle.tolerated(op.method, op.template, version, body)
        assert tempest_oracle.check(schema, status, lenient) == []


def _response(
    method: str, path: str, status: int, body: Any, version: str = "2.1"
) -> httpx.Response:
    request = httpx.Request(method, f"http://openkeel.test{path}")
    headers = {"x-openstack-nova-api-version": version}
    return httpx.Response(status, json=body, headers=headers, request=request)


def test_versions_route_table_is_introspected() -> None:
    op = nova_oracle.find("PUT", "/flavors/{flavor_id}")
    assert op is not None and op.window() == ((2, 55), None)
    assert nova_oracle.find("DELETE", "/abc123/flavors/1") is not None
    assert nova_oracle.find("GET", "/flavors/detail").template == "/flavors/detail"  # type: ignore[union-attr]
    assert nova_oracle.find("DELETE", "/flavors/1").success_code((2, 1)) == 202  # type: ignore[union-attr]


def test_wrong_body_and_status_are_reported() -> None:
    flavor = load("flavors/v2.55/flavor-get-resp.json")
    assert (
        response_check.inspect(_response("GET", "/v2.1/flavors/7", 200, flavor, "2.55")).errors
        == []
    )
    del flavor["flavor"]["description"]
    report = response_check.inspect(_response("GET", "/v2.1/flavors/7", 200, flavor, "2.55"))
    assert report.kind == "nova" and report.tempest
    assert any("'description' is a required property" in e for e in report.errors)
    report = response_check.inspect(_response("GET", "/v2.1/flavors", 202, {"flavors": []}))
    assert report.errors[0] == "status 202 != Nova's 200 for GET /flavors"


def test_fault_shapes() -> None:
    ok = {"itemNotFound": {"code": 404, "message": "Flavor 9 could not be found."}}
    assert response_check.inspect(_response("GET", "/v2.1/flavors/9", 404, ok)).errors == []
    bad = {"itemNotFound": {"code": 400, "message": "x"}}
    assert response_check.fault_errors(404, bad) == ["fault code 400 != HTTP status 404"]
    assert response_check.fault_errors(409, {"conflict": {"code": 409, "message": "x"}}) == [
        "fault body for 409 must have the single key 'conflictingRequest': "
        "{'conflict': {'code': 409, 'message': 'x'}}"
    ]
    keystone = {"error": {"code": 401, "title": "Unauthorized", "message": "x"}}
    assert response_check.fault_errors(401, keystone) == []


def test_unknown_route_is_unchecked() -> None:
    report = response_check.inspect(_response("GET", "/v2.1/no-such-thing", 200, {}))
    assert report.kind == "unchecked"


class _FakeClient:
    """Stands in for ApiClient: always answers with a fixed response."""

    def __init__(self, resp: httpx.Response) -> None:
        self.resp = resp

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.resp


def test_plugin_wrapper_raises_on_mismatch() -> None:
    from tests.conformance.plugin import ConformanceError, Tally, _wrap

    tally = Tally()
    client = _FakeClient(_response("GET", "/v2.1/flavors", 200, {"flavors": [{"id": 1}]}))
    _wrap(client, tally)
    with pytest.raises(ConformanceError, match="GET /flavors"):
        client.request("GET", "/v2.1/flavors")
    client = _FakeClient(_response("GET", "/v2.1/flavors", 200, {"flavors": []}))
    _wrap(client, tally)
    assert client.request("GET", "/v2.1/flavors").status_code == 200
    assert tally.kinds["nova"] == 2 and tally.tempest == 2
