"""Our request validation must accept and reject exactly what Nova's does, with its messages.

For every endpoint in our route table that declares a body or query schema, and for each
microversion where either side's schema changes, generated bodies/queries (request_cases.py)
are run through Nova's own ``_SchemaValidator`` with Nova's schema and through our endpoint's
``Versioned`` schema; the 400 messages (or acceptance) must be identical.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import pytest

from openkeel.api.factory import build_routes
from openkeel.api.microversion import APIVersion
from openkeel.api.routing import Endpoint
from openkeel.api.validation import Versioned
from openkeel.domain.errors import ValidationFailed
from tests.conformance import nova_oracle, request_cases
from tests.conformance.nova_oracle import Operation, Version
from tests.conformance.sample_catalog import all_cases

# Valid bodies beyond Nova's request samples, by (method, Nova template, action).
EXTRA_BODIES: dict[tuple[str, str, str | None], list[Any]] = {
    ("POST", "/flavors/{id}/action", "addTenantAccess"): [{"addTenantAccess": {"tenant": "p1"}}],
    ("POST", "/flavors/{id}/action", "removeTenantAccess"): [
        {"removeTenantAccess": {"tenant": "p1"}}
    ],
    ("POST", "/flavors", None): [{"flavor": {"name": "f", "ram": 1, "vcpus": 1, "disk": 0}}],
    ("PUT", "/flavors/{id}", None): [{"flavor": {"description": "d"}}],
    ("POST", "/os-keypairs", None): [{"keypair": {"name": "kp"}}],
    ("PUT", "/os-quota-sets/{id}", None): [{"quota_set": {"instances": 5}}],
    ("PUT", "/os-quota-class-sets/{id}", None): [{"quota_class_set": {"cores": 5}}],
    ("POST", "/flavors/{flavor_id}/os-extra_specs", None): [{"extra_specs": {"a": "b"}}],
    ("PUT", "/flavors/{flavor_id}/os-extra_specs/{id}", None): [{"a": "b"}],
    ("POST", "/servers/{server_id}/os-volume_attachments", None): [
        {
            "volumeAttachment": {
                "volumeId": "a26887c6-c47b-4654-abb5-dfadf7d3f803",
                "device": "/dev/vdb",
                "tag": "t",
                "delete_on_termination": True,
            }
        }
    ],
    ("PUT", "/servers/{server_id}/os-volume_attachments/{id}", None): [
        {
            "volumeAttachment": {
                "volumeId": "a26887c6-c47b-4654-abb5-dfadf7d3f803",
                "device": "/dev/vdb",
                "tag": "t",
                "delete_on_termination": True,
                "serverId": "9e0ebe8c-7e2b-4d3a-8f2c-4f1c1a0e6d11",
                "id": "a26887c6-c47b-4654-abb5-dfadf7d3f803",
            }
        },
        {"volumeAttachment": {"volumeId": "a26887c6-c47b-4654-abb5-dfadf7d3f803"}},
    ],
    ("POST", "/os-assisted-volume-snapshots", None): [
        {
            "snapshot": {
                "volume_id": "521752a6-acf6-4b2d-bc7a-119f9148cd8c",
                "create_info": {"snapshot_id": "s", "type": "qcow2", "new_file": "f", "id": "i"},
            }
        }
    ],
}


@dataclass(frozen=True)
class Target:
    """One of our endpoints paired with Nova's operation for the same route."""

    label: str
    ours: Endpoint
    nova: Operation


def _targets() -> list[Target]:
    found = []
    for route in build_routes().routes():
        pairs: list[tuple[str, str | None, Endpoint]] = [
            (m, None, ep) for m, eps in route.methods.items() for ep in eps
        ]
        pairs += [("POST", key, ep) for key, eps in route.actions.items() for ep in eps]
        for method, action, ep in pairs:
            if ep.removed or (ep.body is None and ep.query is None):
                continue
            op = nova_oracle.find(method, route.template, action)
            if op is not None:
                found.append(Target(f"{op.label} {ep.min_version}-{ep.max_version}", ep, op))
    return found


def _versions(target: Target, attr: str, ours: Versioned | None) -> list[Version]:
    """Versions where Nova's or our schema may change, inside the endpoint's window."""
    low = (target.ours.min_version.major, target.ours.min_version.minor)
    high = (target.ours.max_version.major, target.ours.max_version.minor)
    points = {low, high}
    for _, (start, end) in target.nova._versioned(attr):
        points.update(p for p in (start, end) if p is not None)
        points.update((p[0], p[1] + 1) for p in (end,) if p is not None)
        points.update((p[0], p[1] - 1) for p in (start,) if p is not None)
    for start, _ in ours.entries if ours else ():
        points.update({(start.major, start.minor), (start.major, start.minor - 1)})
    return sorted(p for p in points if low <= p <= high)


@cache
def _sample_bodies() -> list[tuple[Operation | None, Any]]:
    found = []
    for case in all_cases():
        body = case.body
        if body is None:
            continue
        path = urlsplit(case.path).path.removeprefix("/v2.1")
        action = next(iter(body)) if path.endswith("/action") else None
        found.append((nova_oracle.find(case.method, path, action), body))
    return found


def _bases(op: Operation) -> list[Any]:
    bases = list(EXTRA_BODIES.get((op.method, op.template, op.action), []))
    return bases + [body for owner, body in _sample_bodies() if owner is op]


def _ours(schema: Versioned | None, version: Version, instance: Any, is_body: bool) -> str | None:
    compiled = schema.at(APIVersion(*version)) if schema else None
    if compiled is None:
        return "<no schema>"
    try:
        if is_body:
            compiled.validate_body(instance)
        else:
            compiled.validate_query(instance)
    except ValidationFailed as exc:
        return exc.message
    return None


def _nova(op: Operation, attr: str, version: Version, instance: Any, is_body: bool) -> str | None:
    schemas = op.schemas(attr, version)
    if not schemas:
        return "<no schema>"
    return nova_oracle.validation_error(schemas[0], instance, is_body)


# Big schemas (POST /servers: ~30 microversion windows, dozens of properties) would otherwise
# generate hundreds of thousands of cases; an even spread keeps every kind of case represented.
MAX_BASES = 2
MAX_CASES_PER_VERSION = 600


def _spread(cases: list[Any], limit: int) -> list[Any]:
    if len(cases) <= limit:
        return cases
    step = len(cases) / limit
    return [cases[int(i * step)] for i in range(limit)]


_ENUM = re.compile(r"is not one of (\[.*\])")


def _normal(message: str | None) -> str | None:
    """Nova builds some enums from sets (e.g. servers sort keys from 2.73), so their order in
    its messages changes with the hash seed: compare those lists as sets."""
    if message is None:
        return None
    found = _ENUM.search(message)
    if found is None:
        return message
    items = sorted(ast.literal_eval(found.group(1)), key=repr)
    return message[: found.start(1)] + repr(items) + message[found.end(1) :]


def _compare(target: Target, is_body: bool) -> list[str]:
    attr = "request_body_schemas" if is_body else "request_query_schemas"
    ours = target.ours.body if is_body else target.ours.query
    mismatches = []
    for version in _versions(target, attr, ours):
        nova_schemas = target.nova.schemas(attr, version)
        if is_body:
            cases = [
                c
                for base in _bases(target.nova)[:MAX_BASES]
                for c in request_cases.body_variants(nova_schemas[0] if nova_schemas else {}, base)
            ]
        else:
            cases = list(request_cases.query_variants(nova_schemas[0] if nova_schemas else {}))
        cases = _spread(cases, MAX_CASES_PER_VERSION)
        for name, instance in cases:
            theirs = _nova(target.nova, attr, version, instance, is_body)
            mine = _ours(ours, version, instance, is_body)
            if _normal(theirs) != _normal(mine):
                mismatches.append(f"{version} {name}: Nova={theirs!r} ours={mine!r}")
    return mismatches


TARGETS = _targets()


@pytest.mark.parametrize("target", TARGETS, ids=[t.label for t in TARGETS])
@pytest.mark.parametrize("is_body", [True, False], ids=["body", "query"])
def test_request_validation_matches_nova(target: Target, is_body: bool) -> None:
    if (target.ours.body if is_body else target.ours.query) is None and not target.nova.has(
        "request_body_schemas" if is_body else "request_query_schemas"
    ):
        pytest.skip("neither side validates this part of the request")
    if is_body and not _bases(target.nova):
        pytest.skip("no known-valid body to derive cases from")
    mismatches = _compare(target, is_body)
    assert not mismatches, f"{len(mismatches)} differences:\n" + "\n".join(mismatches[:25])
