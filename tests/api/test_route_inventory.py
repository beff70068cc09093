"""Meta-tests: openkeel's route table against Nova's inventory (shared/spec/api-routes.md).

A resource (Nova controller class) counts as implemented once any of its live rows is
registered; from then on every row of that class must be present with Nova's microversion
window, success status and removed flag. Removed (410) rows are always checked. Rows of
resources not implemented yet are reported by one skipped test with their count. The windows
of each method are checked to be sequential and disjoint, as Placement does.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from openkeel.api.factory import build_routes
from openkeel.api.microversion import MIN_VERSION, APIVersion, v
from openkeel.api.routing import Endpoint, PathRoute
from tests import spec_inventory
from tests.spec_inventory import ActionRow, RouteRow, normalise, status_windows

TABLE = build_routes()
REGISTERED: dict[str, PathRoute] = {normalise(r.template): r for r in TABLE.routes()}
SPEC_ROUTES = [row for row in spec_inventory.routes() if not row.is_action_dispatch]
SPEC_ACTIONS = spec_inventory.actions()


def _class_of(controller: str) -> str:
    """``flavors.FlavorsController.index`` -> ``flavors.FlavorsController``."""
    return controller.rsplit(".", 1)[0]


def _route_endpoints(row: RouteRow) -> list[Endpoint]:
    route = REGISTERED.get(normalise(row.path))
    return list(route.methods.get(row.method, [])) if route else []


def _action_endpoints(row: ActionRow) -> list[Endpoint]:
    route = REGISTERED.get(normalise(row.path))
    return list(route.actions.get(row.action, [])) if route else []


def _implemented_classes() -> set[str]:
    live = {_class_of(r.controller) for r in SPEC_ROUTES if not r.removed and _route_endpoints(r)}
    live |= {
        _class_of(a.controller)
        for a in SPEC_ACTIONS
        if not a.flagged_removed and _action_endpoints(a)
    }
    return live


def _not_built(row: RouteRow) -> bool:
    """A route of a controller otherwise served that is still in openkeel.api.unbuilt (501
    in its window, checked by test_unbuilt_routes): pending, not wrong."""
    route = REGISTERED.get(normalise(row.path))
    return route is not None and not route.methods.get(row.method) and bool(route.unbuilt.get(row.method))  # fmt: skip


IMPLEMENTED = _implemented_classes()
CHECKED_ROUTES = [
    r
    for r in SPEC_ROUTES
    if r.removed or (_class_of(r.controller) in IMPLEMENTED and not _not_built(r))
]
CHECKED_ACTIONS = [
    a for a in SPEC_ACTIONS if a.flagged_removed or _class_of(a.controller) in IMPLEMENTED
]
PENDING_ROUTES = [r for r in SPEC_ROUTES if r not in CHECKED_ROUTES]
PENDING_ACTIONS = [a for a in SPEC_ACTIONS if a not in CHECKED_ACTIONS]


def _status_ok(ep: Endpoint, success: str) -> str | None:
    """None when ``ep.status`` agrees with the spec's success cell, else the complaint."""
    windows = status_windows(success)
    if not windows:  # the spec names no success code (os-getRDPConsole never succeeds)
        return None
    if all(low is None for _, low, _ in windows):
        codes = {code for code, _, _ in windows}
        return None if ep.status in codes else f"status {ep.status}, Nova {sorted(codes)}"
    for code, low, high in windows:
        start, end = max(v(low or "2.1"), MIN_VERSION), v(high or "2.104")
        if ep.max_version < start or ep.min_version > end:
            continue
        if not (start <= ep.min_version and ep.max_version <= end) or ep.status != code:
            return (
                f"window {ep.min_version}-{ep.max_version} status {ep.status}: Nova answers "
                f"{code} in {start}-{end}; split the endpoint at Nova's status boundaries"
            )
    return None


def _compare(
    eps: list[Endpoint], low: str | None, high: str | None, success: str, removed: bool
) -> list[str]:
    if not eps:
        return ["not registered"]
    if removed:
        if len(eps) == 1 and eps[0].removed and eps[0].status == 410:
            return []
        return [f"Nova: removed (410); ours: {eps}"]
    problems = [f"marked removed: {ep}" for ep in eps if ep.removed]
    first = min(ep.min_version for ep in eps)
    last = max(ep.max_version for ep in eps)
    if (str(first), str(last)) != (low, high):
        problems.append(f"window {first}-{last}, Nova {low}-{high}")
    problems += [p for p in (_status_ok(ep, success) for ep in eps) if p]
    return problems


def _policy_problems(eps: list[Endpoint], rules: tuple[str, ...]) -> list[str]:
    return [
        f"policy {ep.policy!r} not in {rules}" for ep in eps if ep.policy and ep.policy not in rules
    ]


@pytest.mark.parametrize("row", CHECKED_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_route_matches_nova(row: RouteRow) -> None:
    eps = _route_endpoints(row)
    problems = _compare(eps, row.min_version, row.max_version, row.success, row.removed)
    problems += _policy_problems(eps, row.policies)
    assert not problems, f"{row.method} {row.path} (§1 row {row.number}): {problems}"


@pytest.mark.parametrize("row", CHECKED_ACTIONS, ids=lambda a: f"{a.path} {a.action}")
def test_action_matches_nova(row: ActionRow) -> None:
    eps = _action_endpoints(row)
    problems = _compare(eps, row.min_version, row.max_version, row.success, row.removed)
    problems += _policy_problems(eps, row.policies)
    assert not problems, f"{row.path} {row.action} (§2 row {row.number}): {problems}"


def test_removed_rows_are_always_checked() -> None:
    assert sum(r.removed for r in CHECKED_ROUTES) == 46
    assert sum(a.flagged_removed for a in CHECKED_ACTIONS) == 8


def test_rows_of_unimplemented_resources() -> None:
    if not PENDING_ROUTES and not PENDING_ACTIONS:
        return
    controllers = [r.controller for r in PENDING_ROUTES] + [a.controller for a in PENDING_ACTIONS]
    classes = Counter(_class_of(name) for name in controllers)
    pytest.skip(
        f"{len(PENDING_ROUTES)} of {len(SPEC_ROUTES)} route rows and {len(PENDING_ACTIONS)} of "
        f"{len(SPEC_ACTIONS)} action rows belong to {len(classes)} resources not implemented "
        f"yet: {', '.join(sorted(classes))}"
    )


def test_every_registered_route_exists_in_nova() -> None:
    spec_routes = {r.key for r in SPEC_ROUTES}
    spec_actions = {a.key for a in SPEC_ACTIONS}
    dispatch = {normalise(r.path) for r in spec_inventory.routes() if r.is_action_dispatch}
    extra: list[str] = []
    for key, route in REGISTERED.items():
        extra += [f"{m} {route.template}" for m in route.methods if (m, key) not in spec_routes]
        extra += [f"{route.template} {a}" for a in route.actions if (key, a) not in spec_actions]
    # A POST on an action route is the dispatcher, listed as such in §1.
    extra = [e for e in extra if not (e.startswith("POST ") and normalise(e[5:]) in dispatch)]
    assert not extra


def test_templates_are_distinct_after_normalising() -> None:
    counts = Counter(normalise(r.template) for r in TABLE.routes())
    clashes = [t for t, n in counts.items() if n > 1]
    assert not clashes, f"same path registered under different placeholder names: {clashes}"


def _window_problems(label: str, eps: list[Endpoint]) -> list[str]:
    if any(ep.removed for ep in eps):
        return [] if len(eps) == 1 else [f"{label}: removed endpoint shares the method"]
    problems = [f"{label}: empty {ep}" for ep in eps if ep.min_version > ep.max_version]
    ordered = sorted(eps, key=lambda ep: ep.min_version)
    for before, after in itertools.pairwise(ordered):
        following = APIVersion(before.max_version.major, before.max_version.minor + 1)
        if after.min_version != following:
            problems.append(
                f"{label}: {before.min_version}-{before.max_version} then "
                f"{after.min_version}-{after.max_version} (overlap or gap)"
            )
    return problems


def test_windows_are_sequential_and_never_overlap() -> None:
    problems: list[str] = []
    for route in TABLE.routes():
        for method, eps in route.methods.items():
            problems += _window_problems(f"{method} {route.template}", eps)
        for key, eps in route.actions.items():
            problems += _window_problems(f"{route.template} {key}", eps)
    assert not problems
