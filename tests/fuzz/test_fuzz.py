"""Schema-derived fuzzing of every route and microversion window (issue 7, "Done means").

For every endpoint of the route table (served, removed and not built), at the edges of each
of its microversion windows, ``latest`` and the legacy /v2 mount, the requests of
tests/fuzz/cases.py are sent to a whole in-process cloud. Every answer must pass
tests/fuzz/verdict.py: no 5xx (501 for a route not built yet), a request id, Nova's JSON
fault for errors and Nova's response schema for successes. The run is deterministic (fixed
seeds, fixed budgets); a failure lists each distinct problem once, with a request that
reproduces it.
"""

from __future__ import annotations

import pytest

from tests.fuzz import cases, verdict
from tests.fuzz.targets import Target, all_targets
from tests.fuzz.world import World

TARGETS = all_targets()
BAD_VERSIONS = (
    "compute 2.0",
    "compute 2.105",
    "compute 3.0",
    "compute 1.1",
    "compute abc",
    "compute 2.",
    "compute 2.1.1",
    "compute",
    "",
    "volume 2.50",
    "compute 2.1, compute 2.5",
    "compute 2.99999999999999999999",
    "compute 02.01",
    "compute -2.1",
    "compute LATEST",
    "compute \u2603",
)
UNKNOWN_PATHS = (
    "/v2.1/fuzz",
    "/v2.1/servers/x/y/z/w",
    "/v2.1//servers",
    "/v2.1/servers/",
    "/v2.1/" + "x" * 5000,
    "/v2.1/%00",
    "/v2.1/fuzz-project-0123/servers",
    "/v2.1/0123abcd/servers",
    "/v3",
    "/v2.1/servers?%zz=1",
)


def _run(world: World, calls: list[cases.Call]) -> dict[str, str]:
    """Send ``calls``; each distinct problem (keyed by route label and text) once, with
    the first request that showed it."""
    found: dict[str, str] = {}
    api = world.cloud.api
    for call in calls:
        resp = api.request(
            call.method,
            call.url(),
            content=call.body,
            headers=call.headers(),
            token=None,
            params=call.query or None,
        )
        for problem in verdict.problems(resp):
            found.setdefault(problem, f"{call.label}: {call.reproducer()}")
    return found


def _report(target: str, found: dict[str, str]) -> str:
    lines = [f"{target}: {len(found)} distinct problem(s)"]
    for problem, example in sorted(found.items())[:15]:
        lines.append(f"  {problem[:240]}\n      e.g. {example[:400]}")
    return "\n".join(lines)


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_route_survives_fuzzing(world: World, target: Target) -> None:
    world.ensure()
    calls: list[cases.Call] = []
    if target.kind == "served":
        for version in target.versions():
            calls.extend(cases.build(world, target, version))
    else:
        # Removed (410) and not-built (501) routes: a light touch at each edge.
        for version in target.versions()[:2] + target.versions()[-1:]:
            calls.extend(cases.build(world, target, version)[-1:])
    for version in target.outside():
        calls.extend(cases.build(world, target, version)[-1:])
    # Valid requests (which may delete or stop what the others act on) go last.
    calls.sort(key=lambda call: call.valid)
    found = _run(world, calls)
    assert not found, _report(target.name, found)


def test_bad_microversion_headers(world: World) -> None:
    world.ensure()
    found: dict[str, str] = {}
    api = world.cloud.api
    paths = ("/v2.1/servers", f"/v2.1/servers/{world.server}", "/v2.1/flavors/detail")
    for path in paths:
        for header in ("OpenStack-API-Version", "X-OpenStack-Nova-API-Version"):
            for value in BAD_VERSIONS:
                text = value if header.startswith("OpenStack") else value.replace("compute ", "")
                resp = api.request("GET", path, headers={header: text.encode()})
                for problem in verdict.problems(resp):
                    found.setdefault(problem, f"GET {path} {header}: {text!r}")
    assert not found, _report("microversion headers", found)


def test_unknown_paths(world: World) -> None:
    found: dict[str, str] = {}
    api = world.cloud.api
    for path in UNKNOWN_PATHS:
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"):
            resp = api.request(method, path, content=b"{}" if method in ("POST", "PUT") else None)
            for problem in verdict.problems(resp):
                if method == "HEAD" and "body" in problem:
                    continue  # a HEAD answer has no body to hold a fault
                found.setdefault(problem, f"{method} {path[:80]}")
    assert not found, _report("unknown paths", found)
