"""Flavors: the entity, the commands that create and list them, and their errors.

Used by the flavor use cases (``openkeel.api.usecases.flavors``) and the flavor repository
(``openkeel.db.repositories.flavors``). Messages follow Nova's wording word for word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from openkeel.domain.errors import Conflict, Invalid, NotFound

# Nova's SQL limits (nova/db/constants.py): the largest INT and single-precision FLOAT.
MAX_INT = 0x7FFFFFFF
SQL_SP_FLOAT_MAX = 3.40282e38

# Columns a flavor list may be sorted by (Nova's VALID_SORT_KEYS); 2.102 drops rxtx_factor.
SORT_KEYS = (
    "created_at",
    "description",
    "disabled",
    "ephemeral_gb",
    "flavorid",
    "id",
    "is_public",
    "memory_mb",
    "name",
    "root_gb",
    "rxtx_factor",
    "swap",
    "updated_at",
    "vcpu_weight",
    "vcpus",
)


@dataclass(frozen=True)
class Flavor:
    """One flavor row with, when loaded, its extra specs."""

    id: int
    flavorid: str
    name: str
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int
    swap: int
    rxtx_factor: float | None
    vcpu_weight: int | None
    disabled: bool
    is_public: bool
    description: str | None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra_specs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewFlavor:
    """What ``POST /flavors`` creates (values already checked and converted)."""

    flavorid: str
    name: str
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    rxtx_factor: float = 1.0
    is_public: bool = True
    description: str | None = None


@dataclass(frozen=True)
class Viewer:
    """Who looks at flavors: admins see every flavor, others public plus shared ones."""

    project_id: str | None
    is_admin: bool


@dataclass(frozen=True)
class FlavorFilters:
    """Filters of a flavor list. ``is_public`` None means public and private alike."""

    is_public: bool | None = True
    disabled: bool | None = None
    min_memory_mb: int | None = None
    min_root_gb: int | None = None
    name_regex: str | None = None


@dataclass(frozen=True)
class FlavorPage:
    """Ordering and paging of a flavor list."""

    sort_key: str = "flavorid"
    sort_dir: str = "asc"
    limit: int | None = None
    marker: str | None = None


def flavor_not_found(flavor_id: str | int) -> NotFound:
    """Nova's FlavorNotFound."""
    return NotFound(f"Flavor {flavor_id} could not be found.")


def flavor_name_exists(name: str) -> Conflict:
    """Nova's FlavorExists."""
    return Conflict(f"Flavor with name {name} already exists.")


def flavor_id_exists(flavorid: str) -> Conflict:
    """Nova's FlavorIdExists."""
    return Conflict(f"Flavor with ID {flavorid} already exists.")


def marker_not_found(marker: str) -> Invalid:
    """The 400 the flavor list answers for an unknown (or invisible) marker."""
    return Invalid(f"marker [{marker}] not found")


def extra_spec_not_found(flavor_id: str, key: str) -> NotFound:
    """Nova's FlavorExtraSpecsNotFound (also used for a missing key on show)."""
    return NotFound(f"Flavor {flavor_id} has no extra specs with key {key}.")


def access_exists(flavor_pk: int, project_id: str) -> Conflict:
    """Nova's FlavorAccessExists; Nova names the flavor by its database id here."""
    return Conflict(
        f"Flavor access already exists for flavor {flavor_pk} and project {project_id} combination."
    )


def access_not_found(flavor_pk: int, project_id: str) -> NotFound:
    """Nova's FlavorAccessNotFound; Nova names the flavor by its database id here."""
    return NotFound(f"Flavor access not found for {flavor_pk} / {project_id} combination.")
