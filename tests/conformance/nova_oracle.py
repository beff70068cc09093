"""Nova 34's own response schemas and success codes, found by introspecting its controllers.

TEST-ONLY oracle (openkeel never imports nova). ``ROUTE_LIST`` in
``nova.api.openstack.compute.routes`` names a controller class and method per route; the
method carries ``response_body_schemas`` / ``request_body_schemas`` / ``request_query_schemas``
(from ``nova.api.validation`` decorators) and ``wsgi_codes``. Used by the conformance plugin
(every response a test produces) and by the sample and request-schema tests.
"""

from __future__ import annotations

import importlib
import re
import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Version = tuple[int, int]
Window = tuple[Version | None, Version | None]

LEGACY = (2, 0)
PROJECT_ID_RE = re.compile(r"^[0-9a-f\-]+$")
_PARAM_RE = re.compile(r"\{[^}]*\}")


def parse_version(text: str | None) -> Version | None:
    """``"2.55"`` -> ``(2, 55)``; None/empty -> None."""
    if not text:
        return None
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def in_window(version: Version, window: Window) -> bool:
    """Nova's ``APIVersionRequest.matches`` with null bounds meaning unbounded."""
    low, high = window
    return (low is None or low <= version) and (high is None or version <= high)


@cache
def quiet_import(dotted: str) -> Any:
    """Import an oracle module; Nova's and tempest's imports warn (eventlet, cgi), which our
    suite treats as errors, so they are silenced here once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(dotted)


def nova_module(name: str) -> Any:
    """``nova.<name>``, imported quietly."""
    return quiet_import(f"nova.{name}")


@dataclass(frozen=True)
class Operation:
    """One Nova method (or body action) on one route template."""

    method: str
    template: str
    action: str | None
    func: Any = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        suffix = f" [{self.action}]" if self.action else ""
        return f"{self.method} {self.template}{suffix}"

    def _versioned(self, attr: str) -> list[tuple[dict[str, Any], Window]]:
        holder = getattr(self.func, attr, None)
        if holder is None:
            return []
        return [(schema, (_bound(low), _bound(high))) for schema, low, high in holder._schemas]

    def schemas(self, attr: str, version: Version) -> list[dict[str, Any]]:
        """Schemas of kind ``attr`` in force at ``version`` (legacy v2: unset or 2.0 min)."""
        found = []
        for schema, window in self._versioned(attr):
            if version == LEGACY:
                if window[0] in (None, LEGACY):
                    found.append(schema)
            elif in_window(version, window):
                found.append(schema)
        return found

    def has(self, attr: str) -> bool:
        """True when Nova declares any schema of kind ``attr`` for this operation."""
        return bool(self._versioned(attr))

    def window(self) -> Window:
        """The microversion window of the method (``wsgi.api_version``), unbounded if none."""
        low = parse_version(getattr(self.func, "min_version", None))
        high = parse_version(getattr(self.func, "max_version", None))
        return low, high

    def success_code(self, version: Version) -> int:
        """The ``@wsgi.response`` code at ``version`` (200 when undeclared)."""
        codes = getattr(self.func, "wsgi_codes", None)
        if codes is None:
            return 200
        for code, low, high in codes._codes:
            if in_window(version, (parse_version(low), parse_version(high))):
                return int(code)
        return 200


def _bound(api_version: Any) -> Version | None:
    if api_version.is_null():
        return None
    return int(api_version.ver_major), int(api_version.ver_minor)


@dataclass
class _Route:
    template: str
    pattern: re.Pattern[str]
    literals: int
    ops: dict[tuple[str, str | None], Operation]


def _pattern(template: str) -> re.Pattern[str]:
    regex = _PARAM_RE.sub("[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}"))
    return re.compile(f"^{regex}$")


def _operations(method: str, template: str, info: Any) -> list[Operation]:
    partial, name = info
    controller, subs = partial.args[0], partial.args[1]
    if name != "action":
        return [Operation(method, template, None, getattr(controller, name))]
    ops = []
    for cls in (controller, *subs):
        for key, attr in getattr(cls, "wsgi_actions", {}).items():
            ops.append(Operation(method, template, key, getattr(cls, attr)))
    return ops


@cache
def _routes() -> tuple[_Route, ...]:
    routes = nova_module("api.openstack.compute.routes")
    versions = nova_module("api.openstack.compute.versions")
    table: dict[str, _Route] = {}
    for template, methods in routes.ROUTE_LIST:
        if isinstance(methods, str) or template == "":
            continue
        literals = sum(1 for seg in template.split("/") if seg and "{" not in seg)
        route = table.setdefault(template, _Route(template, _pattern(template), literals, {}))
        for method, info in methods.items():
            for op in _operations(method, template, info):
                route.ops[(method, op.action)] = op
    # Outside the router: the unversioned root and the /v2.1 (and /v2) version documents.
    specials = {
        "<root>": versions.Versions.index,
        "<multiple-choices>": versions.Versions.multi,
        "<version-document>": versions.VersionsV2.index,
    }
    for label, func in specials.items():
        table[label] = _Route(label, re.compile("(?!)"), 0, {("GET", None): _special(label, func)})
    return tuple(sorted(table.values(), key=lambda r: (-r.literals, r.template)))


def _special(label: str, func: Any) -> Operation:
    return Operation("GET", label, None, func)


def _normalise(template: str) -> str:
    return _PARAM_RE.sub("{}", template.rstrip("/") or "/")


def find(method: str, path: str, action: str | None = None) -> Operation | None:
    """Nova's operation for a template (``/flavors/{flavor_id}``, any parameter names), a
    concrete router-relative path (``/flavors/1``, optionally ``/{project_id}/...``) or a
    special label (``<root>``, ``<version-document>``, ``<multiple-choices>``)."""
    routes = _routes()
    if "{" in path or path.startswith("<"):
        wanted = path if path.startswith("<") else _normalise(path)
        for candidate in routes:
            if candidate.template == wanted or _normalise(candidate.template) == wanted:
                return candidate.ops.get((method, action))
        return None
    found = _match(routes, path)
    if found is None:
        first, sep, rest = path[1:].partition("/")
        if PROJECT_ID_RE.match(first):
            found = _match(routes, "/" + rest if sep else "/")
    return None if found is None else found.ops.get((method, action))


def _match(routes: tuple[_Route, ...], path: str) -> _Route | None:
    for route in routes:
        if route.pattern.match(path):
            return route
    return None


def all_operations() -> list[Operation]:
    """Every Nova operation (for coverage reports and meta-tests)."""
    return [op for route in _routes() for op in route.ops.values()]


_SCHEMAS: dict[int, dict[str, Any]] = {}


@cache
def _validator(schema_id: int, is_body: bool) -> Any:
    validators = nova_module("api.validation.validators")
    return validators._SchemaValidator(_SCHEMAS[schema_id], False, is_body)


def validation_error(schema: dict[str, Any], instance: Any, is_body: bool = True) -> str | None:
    """Nova's 400 message for ``instance`` under ``schema`` (None: valid), using Nova's own
    validator class (compiled once per schema)."""
    exception = nova_module("exception")
    _SCHEMAS.setdefault(id(schema), schema)
    try:
        _validator(id(schema), is_body).validate(instance)
    except exception.ValidationError as exc:
        return str(exc.kwargs.get("detail") or exc)
    return None


def schema_errors(schema: dict[str, Any], body: Any) -> list[str]:
    """Nova's complaints about a response ``body`` (empty: valid)."""
    error = validation_error(schema, body)
    return [] if error is None else [error]


@dataclass(frozen=True)
class Verdict:
    """Outcome of checking one response against Nova's schema for its operation."""

    operation: Operation | None
    checked: bool
    errors: tuple[str, ...] = ()


# Success codes Nova's handler sets on its response object at run time, beside the decorated
# one (server_external_events: ``robj._code = 207`` when some event failed; the floating IP
# actions return their own ``webob.Response(status_int=202)``).
HANDLER_SET_CODES: dict[str, frozenset[int]] = {
    "POST /os-server-external-events": frozenset({207}),
    "POST /servers/{id}/action [addFloatingIp]": frozenset({202}),
    "POST /servers/{id}/action [removeFloatingIp]": frozenset({202}),
}


def check_response(op: Operation, version: Version, status: int, body: Any) -> Verdict:
    """Check a 2xx ``body`` and ``status`` against ``op`` at ``version``."""
    errors: list[str] = []
    expected = op.success_code(version)
    if status != expected and status not in HANDLER_SET_CODES.get(op.label, ()):
        errors.append(f"status {status} != Nova's {expected} for {op.label}")
    schemas = op.schemas("response_body_schemas", version)
    for schema in schemas:
        errors.extend(f"{op.label}: {e}" for e in schema_errors(schema, body))
    return Verdict(op, bool(schemas), tuple(errors))
