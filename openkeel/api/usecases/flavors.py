"""Flavor use cases: list, show, create, update, delete; extra specs; project access.

Called by the flavor handlers with already schema-validated input. Policy checks, Nova's
query parsing (``is_public``, ``minRam``, paging) and error messages live here; SQL is in
``openkeel.db.repositories.flavors`` and extra spec rules in ``openkeel.domain.extra_specs``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.db.repositories.flavors import FlavorRepository
from openkeel.domain import extra_specs
from openkeel.domain.errors import Conflict, Invalid, NotFound
from openkeel.domain.flavors import (
    MAX_INT,
    SQL_SP_FLOAT_MAX,
    Flavor,
    FlavorFilters,
    FlavorPage,
    NewFlavor,
    Viewer,
    extra_spec_not_found,
)

MANAGE = "os_compute_api:os-flavor-manage:%s"
SPECS = "os_compute_api:os-flavor-extra-specs:%s"
ACCESS = "os_compute_api:os-flavor-access"
ACCESS_ACTION = "os_compute_api:os-flavor-access:%s"
_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")


@dataclass(frozen=True)
class ListFlavors:
    """The query of ``GET /flavors[/detail]``: the last value of each parameter."""

    is_public: str | None = None
    min_ram: str | None = None
    min_disk: str | None = None
    name: str | None = None
    sort_key: str | None = None
    sort_dir: str | None = None
    limit: str | None = None
    marker: str | None = None


def _strict_bool(value: str) -> bool | None:
    lowered = value.strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def _public_filter(raw: str | None) -> bool | None:
    if raw is None:
        return True
    if raw.lower() == "none":
        return None
    parsed = _strict_bool(raw)
    if parsed is None:
        raise Invalid(f"Invalid is_public filter [{raw}]")
    return parsed


def _int_filter(raw: str | None, label: str) -> int | None:
    if raw is None:
        return None
    try:
        number = int(raw)
    except ValueError:
        raise Invalid(f"Invalid {label} filter [{raw}]") from None
    # Nova's database compares any integer; a driver binds 64 bits at most, and no column
    # holds a value near those bounds, so clamping keeps the answer (all or none).
    return max(-(2**63), min(number, 2**63 - 1))


def _checked_int(value: Any, label: str, minimum: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise Invalid(f"Invalid input received: {label} must be an integer") from None
    if number < minimum:
        raise Invalid(f"Invalid input received: {label} must be >= {minimum}")
    if number > MAX_INT:
        raise Invalid(f"Invalid input received: {label} must be <= {MAX_INT}")
    return number


def _rxtx_factor(value: Any) -> float:
    try:
        factor = float(value)
    except ValueError:
        factor = -1.0
    if factor <= 0 or factor > SQL_SP_FLOAT_MAX:
        raise Invalid(
            "Invalid input received: 'rxtx_factor' argument must be a float between 0 and "
            f"{SQL_SP_FLOAT_MAX:g}"
        )
    return factor


def new_flavor(values: Mapping[str, Any], with_description: bool) -> NewFlavor:
    """The flavor a validated ``POST /flavors`` body asks for (Nova's conversions)."""
    flavorid = values.get("id")
    name = values["name"]
    return NewFlavor(
        flavorid=str(flavorid) if flavorid else str(uuid.uuid4()),
        name=name.strip() if isinstance(name, str) else name,
        memory_mb=_checked_int(values["ram"], "ram", 1),
        vcpus=_checked_int(values["vcpus"], "vcpus", 1),
        root_gb=_checked_int(values["disk"], "disk", 0),
        ephemeral_gb=_checked_int(values.get("OS-FLV-EXT-DATA:ephemeral", 0), "ephemeral", 0),
        swap=_checked_int(values.get("swap", 0), "swap", 0),
        rxtx_factor=_rxtx_factor(values.get("rxtx_factor", 1.0)),
        is_public=bool(_strict_bool(str(values.get("os-flavor-access:is_public", True)))),
        description=values.get("description") if with_description else None,
    )


def spec_values(specs: Mapping[str, Any], validate: bool) -> dict[str, str]:
    """Extra spec values as stored (numbers become strings), checked as Nova checks them:
    numbers at most 255 characters, and from 2.86 (``validate``) the known-key rules."""
    stored: dict[str, str] = {}
    for key, value in specs.items():
        text = value if isinstance(value, str) else str(value)
        if not isinstance(value, str) and len(text) > 255:
            raise Invalid(f"extra_specs value has {len(text)} characters, more than 255.")
        if validate:
            extra_specs.validate(key, text)
        stored[key] = text
    return stored


class FlavorService:
    """Flavors as seen by one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._repo = FlavorRepository(services.api_db)
        self._max_limit: int = services.conf.api.max_limit
        self._context = context
        self._notifier = services.notifier
        self._viewer = Viewer(context.project_id, context.is_admin)

    @property
    def max_limit(self) -> int:
        """``[api] max_limit``: the largest page a list returns."""
        return self._max_limit

    def may_see_specs(self) -> bool:
        """Whether flavor bodies (2.61+) embed extra specs for this caller (never fatal)."""
        return self._context.can(SPECS % "index", fatal=False)

    def list_flavors(self, query: ListFlavors, with_specs: bool) -> list[Flavor]:
        """Visible flavors filtered, sorted and paged as Nova does."""
        # Only admins choose public/private/all; others see enabled public + shared ones.
        admin = self._viewer.is_admin
        filters = FlavorFilters(
            is_public=_public_filter(query.is_public) if admin else True,
            disabled=None if admin else False,
            min_memory_mb=_int_filter(query.min_ram, "minRam"),
            min_root_gb=_int_filter(query.min_disk, "minDisk"),
            name_regex=query.name,
        )
        limit = self._max_limit if query.limit is None else min(self._max_limit, int(query.limit))
        page = FlavorPage(
            sort_key=query.sort_key or "flavorid",
            sort_dir=query.sort_dir or "asc",
            limit=limit,
            marker=query.marker,
        )
        return self._repo.find(self._viewer, filters, page, with_specs)

    def show(self, flavorid: str) -> Flavor:
        """The visible flavor ``flavorid`` (404 otherwise)."""
        return self._repo.get(self._viewer, flavorid)

    def create(self, values: Mapping[str, Any], with_description: bool) -> Flavor:
        """Create a flavor from a validated body's ``flavor`` (admin by default)."""
        self._context.can(MANAGE % "create", target={})
        flavor = self._repo.create(new_flavor(values, with_description))
        self._notifier.flavor("create", replace(flavor, extra_specs={}), projects=[])
        return flavor

    def update(self, flavorid: str, description: str | None) -> Flavor:
        """Change a flavor's description, the only mutable field (2.55+)."""
        self._context.can(MANAGE % "update", target={})
        flavor = self._repo.update_description(self._viewer, flavorid, description)
        self._notifier.flavor("update", flavor)
        return flavor

    def delete(self, flavorid: str) -> None:
        """Delete a flavor with its extra specs and access list."""
        self._context.can(MANAGE % "delete", target={})
        flavor = (
            self._repo.get(Viewer(None, True), flavorid)
            if self._notifier.versioned_enabled
            else None
        )
        self._repo.destroy(flavorid)
        if flavor is not None:
            self._notifier.flavor("delete", replace(flavor, extra_specs={}))

    def extra_specs(self, flavorid: str) -> dict[str, str]:
        """All extra specs of a visible flavor."""
        self._context.can(SPECS % "index", target={"project_id": self._context.project_id})
        return dict(self._repo.get(self._viewer, flavorid).extra_specs)

    def extra_spec(self, flavorid: str, key: str) -> dict[str, str]:
        """One extra spec as ``{key: value}``."""
        self._context.can(SPECS % "show", target={"project_id": self._context.project_id})
        specs = self._repo.get(self._viewer, flavorid).extra_specs
        if key not in specs:
            raise extra_spec_not_found(flavorid, key)
        return {key: specs[key]}

    def set_extra_specs(
        self, flavorid: str, specs: Mapping[str, Any], validate: bool, uri_key: str | None = None
    ) -> None:
        """Create (``uri_key`` None) or update extra specs; ``validate`` from 2.86."""
        rule = "create" if uri_key is None else "update"
        self._context.can(SPECS % rule, target={})
        stored = spec_values(specs, validate)
        if uri_key is not None and uri_key not in specs:
            raise Invalid("Request body and URI mismatch")
        flavor = self._repo.get(self._viewer, flavorid)
        self._repo.set_extra_specs(flavor.id, stored)
        if self._notifier.versioned_enabled:
            self._notifier.flavor("update", self._repo.get(self._viewer, flavorid))

    def delete_extra_spec(self, flavorid: str, key: str) -> None:
        """Remove one extra spec."""
        self._context.can(SPECS % "delete", target={})
        flavor = self._repo.get(self._viewer, flavorid)
        if key not in flavor.extra_specs:
            raise extra_spec_not_found(flavorid, key)
        self._repo.delete_extra_spec(flavor.id, flavorid, key)

    def access(self, flavorid: str) -> list[str]:
        """Projects a private flavor is shared with (404 for public flavors)."""
        self._context.can(ACCESS)
        flavor = self._repo.get(self._viewer, flavorid)
        if flavor.is_public:
            raise NotFound("Access list not available for public flavors.")
        return self._repo.projects(flavor.id)

    def add_access(self, flavorid: str, project_id: str, refuse_public: bool) -> list[str]:
        """Share a flavor with a project; ``refuse_public`` from 2.7 (409 on public)."""
        self._context.can(ACCESS_ACTION % "add_tenant_access", target={})
        flavor = self._repo.get(self._viewer, flavorid)
        if refuse_public and flavor.is_public:
            raise Conflict("Can not add access to a public flavor.")
        return self._repo.add_project(flavor.id, project_id)

    def remove_access(self, flavorid: str, project_id: str) -> list[str]:
        """Stop sharing a flavor with a project."""
        self._context.can(ACCESS_ACTION % "remove_tenant_access", target={})
        flavor = self._repo.get(self._viewer, flavorid)
        return self._repo.remove_project(flavor.id, project_id)
