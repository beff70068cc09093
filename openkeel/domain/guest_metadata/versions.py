"""The metadata versions Nova 34.0.0 serves (EC2 and OpenStack), oldest first."""

from __future__ import annotations

EC2_VERSIONS = (
    "1.0", "2007-01-19", "2007-03-01", "2007-08-29", "2007-10-10", "2007-12-15",
    "2008-02-01", "2008-09-01", "2009-04-04",
)  # fmt: skip
FOLSOM = "2012-08-10"
GRIZZLY = "2013-04-04"
HAVANA = "2013-10-17"
LIBERTY = "2015-10-15"
NEWTON_ONE = "2016-06-30"
NEWTON_TWO = "2016-10-06"
OCATA = "2017-02-22"
ROCKY = "2018-08-27"
VICTORIA = "2020-10-14"
EPOXY = "2025-04-04"
OPENSTACK_VERSIONS = (
    FOLSOM, GRIZZLY, HAVANA, LIBERTY, NEWTON_ONE, NEWTON_TWO, OCATA, ROCKY, VICTORIA, EPOXY,
)  # fmt: skip
LATEST = "latest"


class UnknownVersion(LookupError):
    """Not a version this service knows."""


def at_least(required: str, requested: str, versions: tuple[str, ...]) -> bool:
    """``requested`` (a known version or ``latest``) is ``required`` or newer."""
    if requested == LATEST:
        return True
    return versions.index(requested) >= versions.index(required)


def resolve(requested: str, versions: tuple[str, ...]) -> str:
    """The version ``requested`` names (``latest``: the newest); UnknownVersion otherwise."""
    if requested == LATEST:
        return versions[-1]
    if requested not in versions:
        raise UnknownVersion(requested)
    return requested
