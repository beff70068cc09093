"""Tempest's compute response schemas, chosen per route and microversion as its clients do.

TEST-ONLY oracle. Tempest's service clients (``tempest.lib.services.compute.*_client``) pick a
schema module from ``schema_versions_info`` by the requested microversion and then a schema
variable per call; each schema has a ``status_code`` list and a ``response_body``. This module
reproduces that choice for the resources listed in ``ROUTES`` (keyed by Nova's route template)
and validates like ``RestClient.validate_response``. Called by the conformance plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from tests.conformance.nova_oracle import LEGACY, Version, in_window, parse_version, quiet_import

_BASE = "tempest.lib.api_schema.response.compute"

# (min, max, module folder) as in the clients' ``schema_versions_info``.
Chooser = tuple[tuple[str | None, str | None, str], ...]
V21: Chooser = ((None, None, "v2_1"),)
FLAVORS: Chooser = ((None, "2.54", "v2_1"), ("2.55", "2.60", "v2_55"), ("2.61", None, "v2_61"))
KEYPAIRS: Chooser = ((None, "2.1", "v2_1"), ("2.2", None, "v2_2"))
QUOTAS: Chooser = ((None, "2.35", "v2_1"), ("2.36", "2.56", "v2_36"), ("2.57", None, "v2_57"))
QUOTA_CLASSES: Chooser = (
    (None, "2.49", "v2_1"),
    ("2.50", "2.56", "v2_50"),
    ("2.57", None, "v2_57"),
)
LIMITS: Chooser = (
    (None, "2.35", "v2_1"),
    ("2.36", "2.38", "v2_36"),
    ("2.39", "2.56", "v2_39"),
    ("2.57", None, "v2_57"),
)


@dataclass(frozen=True)
class Choice:
    """Which tempest module (per version) and variable validate one operation."""

    chooser: Chooser
    module: str
    variable: str


# (method, Nova route template, action key) -> tempest's choice.
ROUTES: dict[tuple[str, str, str | None], Choice] = {
    ("GET", "/flavors", None): Choice(FLAVORS, "flavors", "list_flavors"),
    ("GET", "/flavors/detail", None): Choice(FLAVORS, "flavors", "list_flavors_details"),
    ("GET", "/flavors/{id}", None): Choice(FLAVORS, "flavors", "create_update_get_flavor_details"),
    ("POST", "/flavors", None): Choice(FLAVORS, "flavors", "create_update_get_flavor_details"),
    ("PUT", "/flavors/{id}", None): Choice(FLAVORS, "flavors", "create_update_get_flavor_details"),
    ("DELETE", "/flavors/{id}", None): Choice(V21, "flavors", "delete_flavor"),
    ("GET", "/flavors/{flavor_id}/os-extra_specs", None): Choice(
        V21, "flavors_extra_specs", "set_get_flavor_extra_specs"
    ),
    ("POST", "/flavors/{flavor_id}/os-extra_specs", None): Choice(
        V21, "flavors_extra_specs", "set_get_flavor_extra_specs"
    ),
    ("GET", "/flavors/{flavor_id}/os-extra_specs/{id}", None): Choice(
        V21, "flavors_extra_specs", "set_get_flavor_extra_specs_key"
    ),
    ("PUT", "/flavors/{flavor_id}/os-extra_specs/{id}", None): Choice(
        V21, "flavors_extra_specs", "set_get_flavor_extra_specs_key"
    ),
    ("DELETE", "/flavors/{flavor_id}/os-extra_specs/{id}", None): Choice(
        V21, "flavors_extra_specs", "unset_flavor_extra_specs"
    ),
    ("GET", "/flavors/{flavor_id}/os-flavor-access", None): Choice(
        V21, "flavors_access", "add_remove_list_flavor_access"
    ),
    ("POST", "/flavors/{id}/action", "addTenantAccess"): Choice(
        V21, "flavors_access", "add_remove_list_flavor_access"
    ),
    ("POST", "/flavors/{id}/action", "removeTenantAccess"): Choice(
        V21, "flavors_access", "add_remove_list_flavor_access"
    ),
    ("GET", "/os-keypairs", None): Choice(KEYPAIRS, "keypairs", "list_keypairs"),
    ("GET", "/os-keypairs/{id}", None): Choice(KEYPAIRS, "keypairs", "get_keypair"),
    ("POST", "/os-keypairs", None): Choice(KEYPAIRS, "keypairs", "create_keypair"),
    ("DELETE", "/os-keypairs/{id}", None): Choice(KEYPAIRS, "keypairs", "delete_keypair"),
    ("GET", "/os-quota-sets/{id}", None): Choice(QUOTAS, "quotas", "get_quota_set"),
    ("GET", "/os-quota-sets/{id}/detail", None): Choice(QUOTAS, "quotas", "get_quota_set_details"),
    ("GET", "/os-quota-sets/{id}/defaults", None): Choice(QUOTAS, "quotas", "get_quota_set"),
    ("PUT", "/os-quota-sets/{id}", None): Choice(QUOTAS, "quotas", "update_quota_set"),
    ("DELETE", "/os-quota-sets/{id}", None): Choice(QUOTAS, "quotas", "delete_quota"),
    ("GET", "/os-quota-class-sets/{id}", None): Choice(
        QUOTA_CLASSES, "quota_classes", "get_quota_class_set"
    ),
    ("PUT", "/os-quota-class-sets/{id}", None): Choice(
        QUOTA_CLASSES, "quota_classes", "update_quota_class_set"
    ),
    ("GET", "/limits", None): Choice(LIMITS, "limits", "get_limit"),
    ("GET", "/os-availability-zone", None): Choice(
        V21, "availability_zone", "list_availability_zone_list"
    ),
    ("GET", "/os-availability-zone/detail", None): Choice(
        V21, "availability_zone", "list_availability_zone_list_detail"
    ),
    ("GET", "/extensions", None): Choice(V21, "extensions", "list_extensions"),
    ("GET", "<root>", None): Choice(V21, "versions", "list_versions"),
    ("GET", "<version-document>", None): Choice(V21, "versions", "get_one_version"),
}


# Top-level keys Nova really returns that tempest's schema (frozen before the microversion that
# added them, and never exercised by tempest's tests) rejects: dropped before validating.
TOLERATED: dict[tuple[str, str], tuple[str, Version]] = {
    ("GET", "/os-keypairs"): ("keypairs_links", (2, 35)),
}


def tolerated(method: str, template: str, version: Version, body: Any) -> Any:
    """``body`` without the keys tempest's schema does not know (see ``TOLERATED``)."""
    gap = TOLERATED.get((method, template))
    if gap is None or not isinstance(body, dict) or version < gap[1]:
        return body
    return {k: v for k, v in body.items() if k != gap[0]}


def _folder(chooser: Chooser, version: Version) -> str:
    # Tempest: no microversion requested -> the entry whose min is None.
    for low, high, folder in chooser:
        if version == LEGACY and low is None:
            return folder
        if in_window(version, (parse_version(low), parse_version(high))):
            return folder
    raise LookupError(f"no tempest schema module for {version}")


def schema_for(method: str, template: str, action: str | None, version: Version) -> Any:
    """Tempest's schema dict (``status_code`` + ``response_body``) or None when tempest has
    no client call for the operation."""
    choice = ROUTES.get((method, template, action))
    if choice is None:
        return None
    folder = _folder(choice.chooser, version)
    module = quiet_import(f"{_BASE}.{folder}.{choice.module}")
    return getattr(module, choice.variable)


@cache
def _validator(schema_id: int) -> Any:
    jv = quiet_import("tempest.lib.common.jsonschema_validator")
    return jv.JSONSCHEMA_VALIDATOR(_BODIES[schema_id], format_checker=jv.FORMAT_CHECKER)


_BODIES: dict[int, dict[str, Any]] = {}


def check(schema: dict[str, Any], status: int, body: Any) -> list[str]:
    """Tempest's ``validate_response`` for a 2xx answer: status in ``status_code``, body
    valid against ``response_body`` (or absent when the schema has none)."""
    errors = []
    if status not in schema["status_code"]:
        errors.append(f"tempest expects status {schema['status_code']}, got {status}")
    body_schema = schema.get("response_body")
    if body_schema:
        _BODIES.setdefault(id(body_schema), body_schema)
        found = next(_validator(id(body_schema)).iter_errors(body), None)
        if found is not None:
            errors.append(f"tempest: HTTP response body is invalid ({found.message})")
    elif body:
        errors.append(f"tempest: HTTP response body should not exist ({body})")
    return errors
