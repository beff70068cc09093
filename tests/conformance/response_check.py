"""Checks one HTTP response of our API against Nova's and tempest's expectations.

Called by the conformance pytest plugin for every response a test produces: 2xx (and 300)
answers are validated against Nova's response schema and success code for the route and
microversion (and tempest's schema where tempest has a client call); error answers must have
Nova's fault shape. Responses Nova has no schema for are reported as unchecked, not failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.conformance import nova_oracle, tempest_oracle
from tests.conformance.nova_oracle import LEGACY, Version, parse_version

FAULT_NAMES = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    415: "badMediaType",
    429: "overLimit",
    501: "notImplemented",
    503: "serviceUnavailable",
}


@dataclass
class Report:
    """What was checked for one response and what did not match."""

    label: str
    kind: str  # "nova", "fault", "unchecked"
    tempest: bool = False
    errors: list[str] = field(default_factory=list)


def split_mount(path: str) -> tuple[str | None, str]:
    """``/v2.1/flavors`` -> ``("v2.1", "/flavors")``; ``/`` -> ``(None, "/")``."""
    for mount in ("v2.1", "v2"):
        prefix = f"/{mount}"
        if path == prefix or path.startswith(prefix + "/"):
            return mount, path[len(prefix) :]
    return None, path


def response_version(resp: httpx.Response, mount: str | None) -> Version:
    """The microversion the response was served at (legacy v2: 2.0; unversioned: 2.1)."""
    if mount == "v2":
        return LEGACY
    return parse_version(resp.headers.get("x-openstack-nova-api-version")) or (2, 1)


def _json_body(resp: httpx.Response) -> tuple[bool, Any]:
    if not resp.content:
        return True, None
    if not resp.headers.get("content-type", "").startswith("application/json"):
        return False, None
    return True, resp.json()


def _action(request: httpx.Request) -> str | None:
    try:
        body = json.loads(request.content or b"null")
    except ValueError:
        return None
    if isinstance(body, dict) and len(body) == 1:
        return str(next(iter(body)))
    return None


def find_operation(resp: httpx.Response) -> tuple[nova_oracle.Operation | None, str]:
    """Nova's operation for the request behind ``resp`` and a label for reports."""
    method = resp.request.method
    mount, rest = split_mount(resp.request.url.path)
    if mount is None:
        special = "<root>" if rest == "/" else "<multiple-choices>"
        return nova_oracle.find(method, special), f"{method} {special}"
    if rest in ("", "/"):
        return nova_oracle.find(method, "<version-document>"), f"{method} <version-document>"
    op = nova_oracle.find(method, rest)
    if op is None and method == "POST" and rest.endswith("/action"):
        action = _action(resp.request)
        op = nova_oracle.find(method, rest, action)
        return op, f"POST {rest} [{action}]"
    return op, f"{method} {rest}"


def fault_errors(status: int, body: Any) -> list[str]:
    """Nova's fault shape ``{"<name>": {"code": status, "message": str}}``; also accepts the
    two non-Nova bodies a Nova deployment really returns: keystonemiddleware's 401 and webob's
    router-level 404."""
    if status == 401 and isinstance(body, dict) and set(body) == {"error"}:
        inner = body["error"]
        ok = isinstance(inner, dict) and inner.get("code") == 401 and "message" in inner
        return [] if ok else [f"bad keystonemiddleware 401 body: {body}"]
    if status == 404 and isinstance(body, dict) and body.get("title") == "Not Found":
        return []
    name = FAULT_NAMES.get(status, "computeFault")
    if not isinstance(body, dict) or list(body) != [name]:
        return [f"fault body for {status} must have the single key {name!r}: {body}"]
    inner = body[name]
    allowed = {"code", "message"} | ({"retryAfter"} if status in (413, 429) else set())
    if not isinstance(inner, dict) or not {"code", "message"} <= set(inner) <= allowed:
        return [f"fault {name} must hold exactly code and message: {inner}"]
    errors = []
    if inner["code"] != status or isinstance(inner["code"], bool):
        errors.append(f"fault code {inner['code']!r} != HTTP status {status}")
    if not isinstance(inner["message"], str):
        errors.append(f"fault message is not a string: {inner['message']!r}")
    return errors


def inspect(resp: httpx.Response) -> Report:
    """Check ``resp``; the report says what was checked and lists every mismatch."""
    op, label = find_operation(resp)
    is_json, body = _json_body(resp)
    status = resp.status_code
    if status >= 400:
        if not is_json or body is None:
            return Report(label, "unchecked")
        return Report(label, "fault", errors=fault_errors(status, body))
    if op is None or not is_json:
        return Report(label, "unchecked")
    version = response_version(resp, split_mount(resp.request.url.path)[0])
    verdict = nova_oracle.check_response(op, version, status, body)
    if not verdict.checked:
        return Report(label, "unchecked")
    report = Report(op.label, "nova", errors=list(verdict.errors))
    schema = tempest_oracle.schema_for(op.method, op.template, op.action, version)
    if schema is not None and 200 <= status < 300:
        report.tempest = True
        lenient = tempest_oracle.tolerated(op.method, op.template, version, body)
        report.errors.extend(tempest_oracle.check(schema, status, lenient))
    return report
