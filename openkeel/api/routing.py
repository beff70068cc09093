"""The route table: (method, path template) -> endpoints with microversion windows.

Resources register their endpoints here (one ``routes.py`` per resource). The app matches a path,
then picks the endpoint whose window contains the negotiated version; ``/action`` routes
dispatch on the single body key to an action endpoint. Removed APIs answer 410 at every
version; Nova's routes not built yet (``openkeel.api.unbuilt``) answer 501 in their window, unless
a resource registers the same method or action for real. Templates are keyed by their shape
(placeholder names aside), so both kinds share one path route. A meta-test compares this table
with Nova's inventory in ../shared/spec/api-routes.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openkeel.api.microversion import LEGACY_V2, MAX_VERSION, MIN_VERSION, APIVersion, v
from openkeel.api.request import ApiRequest, Reply
from openkeel.api.validation import Versioned

Handler = Callable[[ApiRequest], "Reply | dict[str, Any] | None"]


@dataclass(frozen=True)
class Endpoint:
    """One method on one path, available in [min_version, max_version]."""

    handler: Handler | None
    status: int = 200
    min_version: APIVersion = MIN_VERSION
    max_version: APIVersion = MAX_VERSION
    removed: bool = False
    body: Versioned | None = None
    query: Versioned | None = None
    # The main policy rule, for documentation and the route meta-test; handlers check it.
    policy: str | None = None
    # A read of one object from the databases only (a few indexed statements, no other
    # service): may run on the event loop when every database is a local SQLite file.
    bounded: bool = False
    # A route of Nova's that OpenKeel does not build yet: 501 notImplemented in its window.
    not_built: bool = False

    def serves(self, version: APIVersion) -> bool:
        """True when this endpoint exists at ``version``.

        The legacy ``/v2`` mount (version 2.0) reaches only endpoints that have existed since
        the start of v2.1, as Nova's unversioned controller methods.
        """
        if version == LEGACY_V2:
            return self.min_version == MIN_VERSION
        return self.min_version <= version <= self.max_version


def endpoint(
    handler: Handler | None,
    status: int = 200,
    since: str = "2.1",
    until: str = "2.104",
    body: Versioned | None = None,
    query: Versioned | None = None,
    policy: str | None = None,
    bounded: bool = False,
) -> Endpoint:
    """Terse constructor used by the resources' route modules."""
    return Endpoint(handler, status, v(since), v(until), False, body, query, policy, bounded)


GONE = Endpoint(handler=None, status=410, removed=True)


@dataclass
class PathRoute:
    """All endpoints of one path template, by method, plus its body actions."""

    template: str
    pattern: re.Pattern[str]
    literal_segments: int
    methods: dict[str, list[Endpoint]] = field(default_factory=dict)
    actions: dict[str, list[Endpoint]] = field(default_factory=dict)
    # Nova's methods and actions on this path not built yet (used only where no real one is).
    unbuilt: dict[str, list[Endpoint]] = field(default_factory=dict)
    unbuilt_actions: dict[str, list[Endpoint]] = field(default_factory=dict)

    def endpoints(self, method: str) -> list[Endpoint]:
        """The endpoints of ``method``: the real ones, else the not-built ones."""
        return self.methods.get(method) or self.unbuilt.get(method) or []

    def action_endpoints(self, key: str) -> list[Endpoint] | None:
        """The endpoints of body action ``key`` (None: no such action)."""
        return self.actions.get(key) or self.unbuilt_actions.get(key)

    @property
    def has_actions(self) -> bool:
        """True when POST on this path dispatches on the body key."""
        return bool(self.actions or self.unbuilt_actions)


def _compile(template: str) -> re.Pattern[str]:
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return re.compile(f"^{regex}$")


def _shape(template: str) -> str:
    """``/servers/{server_id}/tags/{tag}`` -> ``/servers/{}/tags/{}``."""
    return re.sub(r"\{\w+\}", "{}", template)


class RouteTable:
    """Path templates in matching order: more literal segments first."""

    def __init__(self) -> None:
        self._routes: dict[str, PathRoute] = {}
        self._ordered: list[PathRoute] | None = None
        self._static: dict[str, PathRoute] = {}

    def _route(self, template: str, real: bool = True) -> PathRoute:
        shape = _shape(template)
        route = self._routes.get(shape)
        if real and route is not None and route.template != template and _has_real(route):
            raise ValueError(f"{template} is registered as {route.template} already")
        if route is None or (real and route.template != template):
            # The first real registration names the placeholders its handlers read.
            literal = sum(1 for seg in template.split("/") if seg and "{" not in seg)
            fresh = PathRoute(template, _compile(template), literal)
            if route is not None:
                fresh.unbuilt, fresh.unbuilt_actions = route.unbuilt, route.unbuilt_actions
            route = self._routes[shape] = fresh
            self._ordered = None
        return route

    def add(self, method: str, template: str, ep: Endpoint) -> None:
        """Register ``ep`` for ``method`` on ``template`` (several windows may share it)."""
        self._route(template).methods.setdefault(method, []).append(ep)

    def add_action(self, template: str, key: str, ep: Endpoint) -> None:
        """Register a body action (``POST template`` with body ``{key: ...}``)."""
        route = self._route(template)
        route.methods.setdefault("POST", [])
        route.actions.setdefault(key, []).append(ep)

    def not_built(self, method: str, template: str, since: str, until: str) -> None:
        """Register Nova's ``method`` on ``template`` as not built yet (501 in its window)."""
        ep = Endpoint(None, 501, v(since), v(until), not_built=True)
        self._route(template, real=False).unbuilt.setdefault(method, []).append(ep)

    def not_built_action(self, template: str, key: str, since: str, until: str) -> None:
        """Register Nova's body action ``key`` on ``template`` as not built yet."""
        ep = Endpoint(None, 501, v(since), v(until), not_built=True)
        self._route(template, real=False).unbuilt_actions.setdefault(key, []).append(ep)

    def gone(self, method: str, template: str) -> None:
        """Register a removed API: 410 at every version."""
        self.add(method, template, GONE)

    def match(self, path: str) -> tuple[PathRoute, dict[str, str]] | None:
        """The route for ``path`` and its parameters, or None (a JSON 404)."""
        if self._ordered is None:
            self._ordered = sorted(
                self._routes.values(), key=lambda r: (-r.literal_segments, r.template)
            )
            self._static = {r.template: r for r in self._ordered if "{" not in r.template}
        static = self._static.get(path)
        if static is not None:
            return static, {}
        for route in self._ordered:
            found = route.pattern.match(path)
            if found is not None:
                return route, found.groupdict()
        return None

    def routes(self) -> list[PathRoute]:
        """Every registered path route (for meta-tests and docs)."""
        return list(self._routes.values())


def _has_real(route: PathRoute) -> bool:
    return bool(route.methods or route.actions)
