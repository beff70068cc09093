"""Every route the compute API serves, read from its route table, with the microversions at
which to fuzz each one: the edges of its window and of each of its schema windows (first
version, the one before it, the last one), ``latest`` and, for routes as old as v2.1, the
legacy ``/v2`` mount.
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.factory import build_routes
from openkeel.api.microversion import MAX_VERSION, MIN_VERSION, APIVersion
from openkeel.api.routing import Endpoint

LEGACY = "v2"  # the microversion label of a request on the legacy /v2 mount


@dataclass(frozen=True)
class Target:
    """One method (or body action) on one path template, in one microversion window."""

    method: str
    template: str
    action: str
    endpoint: Endpoint

    @property
    def name(self) -> str:
        window = f"{self.endpoint.min_version}-{self.endpoint.max_version}"
        action = f" [{self.action}]" if self.action else ""
        return f"{self.method} {self.template}{action} {window}"

    @property
    def kind(self) -> str:
        """``served``, ``removed`` (410) or ``not_built`` (501)."""
        if self.endpoint.removed:
            return "removed"
        return "not_built" if self.endpoint.not_built else "served"

    def versions(self) -> list[str]:
        """The microversions to fuzz at (``latest`` and ``v2`` included where they apply)."""
        ep = self.endpoint
        low, high = max(ep.min_version, MIN_VERSION), min(ep.max_version, MAX_VERSION)
        points = {low, high}
        for versioned in (ep.body, ep.query):
            for start, _schema in versioned.entries if versioned else ():
                for point in (start, APIVersion(start.major, start.minor - 1)):
                    if low <= point <= high:
                        points.add(point)
        texts = [str(point) for point in sorted(points)]
        if high == MAX_VERSION:
            texts.append("latest")
        if ep.min_version == MIN_VERSION:
            texts.append(LEGACY)
        return texts

    def outside(self) -> list[str]:
        """Microversions just outside the window (Nova: 404, or 405 for a lone method)."""
        ep = self.endpoint
        found = []
        if ep.min_version > MIN_VERSION:
            found.append(str(APIVersion(ep.min_version.major, ep.min_version.minor - 1)))
        if ep.max_version < MAX_VERSION:
            found.append(str(APIVersion(ep.max_version.major, ep.max_version.minor + 1)))
        return found


def all_targets() -> list[Target]:
    """Every endpoint of every route, served, removed and not built alike."""
    found: list[Target] = []
    for route in sorted(build_routes().routes(), key=lambda r: r.template):
        served = [(m, "", eps) for m, eps in route.methods.items()]
        served += [("POST", key, eps) for key, eps in route.actions.items()]
        served += [(m, "", eps) for m, eps in route.unbuilt.items() if m not in route.methods]
        served += [
            ("POST", key, eps)
            for key, eps in route.unbuilt_actions.items()
            if key not in route.actions
        ]
        for method, action, endpoints in served:
            found.extend(Target(method, route.template, action, ep) for ep in endpoints)
    return found
