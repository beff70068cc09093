"""What a fuzzed response must be: never a 5xx (a 501 for a Nova route not built yet is
allowed), always a request id, under /v2.1 (and /v2) an error is Nova's JSON fault with
``code`` equal to the status, and a success validates against Nova's response schema."""

from __future__ import annotations

import json

import httpx

from tests.conformance import response_check


def problems(resp: httpx.Response) -> list[str]:
    """Every way ``resp`` breaks the contract (empty: it is fine)."""
    found: list[str] = []
    status = resp.status_code
    if status >= 500 and status != 501:
        found.append(f"{status} {_message(resp)}")
    if not resp.headers.get("x-openstack-request-id"):
        found.append(f"{status} without x-openstack-request-id")
    if status >= 400:
        found.extend(_fault_problems(resp))
    elif not _explicit_status(resp):
        errors = response_check.inspect(resp).errors
        found.extend(
            f"{status} {error}" for error in errors if not _echoed_as_nova_does(resp, error)
        )
    return found


def _echoed_as_nova_does(resp: httpx.Response, error: str) -> bool:
    """Where Nova breaks its own response schema the same way, so it is not a fault of ours:
    key pair create takes any string as ``user_id`` (2.10+, admin) and answers it back,
    although the schema wants an id pattern; the usage audit log lists host names in
    ``hosts_not_run``, although the schema wants uuids (tests/api/test_instance_usage_audit_log.py)."""
    path = resp.request.url.path
    keypair_echo = (
        resp.request.method == "POST"
        and path.endswith("/os-keypairs")
        and "field/attribute user_id" in error
    )
    audit_hosts = "/os-instance_usage_audit_log" in path and "is not a 'uuid'" in error
    return keypair_echo or audit_hosts


def _explicit_status(resp: httpx.Response) -> bool:
    """Nova's tag update answers 201 or 204 outside its ``@wsgi.response`` (which the oracle
    reads): not a success body to check against the oracle."""
    path = resp.request.url.path
    return resp.request.method == "PUT" and "/tags/" in path and resp.status_code in (201, 204)


def _fault_problems(resp: httpx.Response) -> list[str]:
    status = resp.status_code
    if not resp.headers.get("content-type", "").startswith("application/json"):
        return [f"{status} {resp.headers.get('content-type')!r} body {resp.text[:120]!r}"]
    try:
        body = resp.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return [f"{status} body is not JSON: {resp.text[:120]!r}"]
    if isinstance(body, dict) and "title" in body:
        return [f"{status} webob-style body, not a Nova fault: {resp.text[:120]!r}"]
    return [f"{status} {error}" for error in response_check.fault_errors(status, body)]


def _message(resp: httpx.Response) -> str:
    try:
        (fault,) = resp.json().values()
        return str(fault.get("message", ""))[:200]
    except (ValueError, AttributeError, TypeError):
        return resp.text[:200]
