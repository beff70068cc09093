"""Microversion parsing and negotiation, as Nova does it.

Called by the app for every request under /v2.1. Pure functions over header values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from openkeel.domain.errors import ComputeError, Invalid


class APIVersion(NamedTuple):
    """A compute API microversion, ordered as a tuple (2, 10) > (2, 9)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, text: str) -> APIVersion:
        """Parse ``X.Y``; raise :class:`InvalidVersionString` otherwise."""
        match = _VERSION_RE.match(text)
        if match is None:
            raise InvalidVersionString(text)
        return cls(int(match.group(1)), int(match.group(2)))


_VERSION_RE = re.compile(r"^([1-9]\d*)\.([1-9]\d*|0)$")

MIN_VERSION = APIVersion(2, 1)
MAX_VERSION = APIVersion(2, 104)
LEGACY_V2 = APIVersion(2, 0)


def v(text: str) -> APIVersion:
    """Shorthand used by route and schema tables: ``v("2.55")``."""
    return APIVersion.parse(text)


class InvalidVersionString(Invalid):
    """The version header is not of the form X.Y (400, no version headers echoed)."""

    def __init__(self, text: str) -> None:
        super().__init__(
            f"API Version String {text} is of invalid format. Must be of format MajorNum.MinorNum."
        )


class VersionNotAcceptable(ComputeError):
    """The version is well formed but outside [min, max] (406, headers echo it)."""

    code = 406

    def __init__(self, requested: APIVersion) -> None:
        super().__init__(
            f"Version {requested} is not supported by the API. Minimum is {MIN_VERSION} "
            f"and maximum is {MAX_VERSION}."
        )
        self.requested = requested


@dataclass(frozen=True)
class VersionRequest:
    """The outcome of negotiation: the version to serve."""

    version: APIVersion


def _last_compute_entry(header: str) -> str | None:
    """From ``OpenStack-API-Version: compute 2.1, placement 1.2`` pick the last compute value."""
    found: str | None = None
    for item in header.split(","):
        parts = item.strip().split(None, 1)
        if len(parts) == 2 and parts[0].lower() == "compute":
            found = parts[1].strip()
    return found


def requested_version_text(new_header: list[str], legacy_header: list[str]) -> str | None:
    """The raw version text the client asked for, or None when it asked for none."""
    if new_header:
        found = _last_compute_entry(",".join(new_header))
        if found is not None:
            return found
    if legacy_header:
        items = [i.strip() for i in ",".join(legacy_header).split(",") if i.strip()]
        if items:
            return items[-1]
    return None


def negotiate(text: str | None) -> APIVersion:
    """Resolve the requested text to a version; raise 400 or 406 errors as Nova does."""
    if text is None:
        return MIN_VERSION
    if text == "latest":
        return MAX_VERSION
    requested = APIVersion.parse(text)
    if not MIN_VERSION <= requested <= MAX_VERSION:
        raise VersionNotAcceptable(requested)
    return requested
