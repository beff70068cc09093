"""The route table: (method, path template) -> endpoints with microversion windows.

Resources register their endpoints here (one ``routes.py`` per resource). The app matches a path,
then picks the endpoint whose window contains the negotiated version; ``/action`` routes
dispatch on the single body key to an action endpoint. Removed APIs answer 410 at every
version. A meta-test compares this table with Nova's inventory in ../shared/spec/api-routes.md.
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


def _compile(template: str) -> re.Pattern[str]:
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return re.compile(f"^{regex}$")


class RouteTable:
    """Path templates in matching order: more literal segments first."""

    def __init__(self) -> None:
        self._routes: dict[str, PathRoute] = {}
        self._ordered: list[PathRoute] | None = None
        self._static: dict[str, PathRoute] = {}

    def _route(self, template: str) -> PathRoute:
        route = self._routes.get(template)
        if route is None:
            literal = sum(1 for seg in template.split("/") if seg and "{" not in seg)
            route = PathRoute(template, _compile(template), literal)
            self._routes[template] = route
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

    def gone(self, method: str, template: str) -> None:
        """Register a removed API: 410 at every version."""
        self.add(method, template, GONE)

    def match(self, path: str) -> tuple[PathRoute, dict[str, str]] | None:
        """The route for ``path`` and its parameters, or None (plain 404)."""
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
