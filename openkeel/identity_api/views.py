"""Keystone's JSON forms of the identity records."""

from __future__ import annotations

from typing import Any

from openkeel.db.identity_store import (
    DEFAULT_DOMAIN_ID,
    DEFAULT_DOMAIN_NAME,
    SYSTEM_TARGET,
    Assignment,
    Project,
    Role,
    User,
)


def domain(base: str) -> dict[str, Any]:
    return {
        "id": DEFAULT_DOMAIN_ID,
        "name": DEFAULT_DOMAIN_NAME,
        "description": "The default domain",
        "enabled": True,
        "tags": [],
        "options": {},
        "links": {"self": f"{base}/v3/domains/{DEFAULT_DOMAIN_ID}"},
    }


def domain_ref() -> dict[str, str]:
    return {"id": DEFAULT_DOMAIN_ID, "name": DEFAULT_DOMAIN_NAME}


def project(p: Project, base: str) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "domain_id": p.domain_id,
        "description": p.description,
        "enabled": p.enabled,
        "parent_id": p.domain_id,
        "is_domain": False,
        "tags": list(p.tags),
        "options": {},
        "links": {"self": f"{base}/v3/projects/{p.id}"},
    }


def user(u: User, base: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        **u.extra,
        "id": u.id,
        "name": u.name,
        "domain_id": u.domain_id,
        "enabled": u.enabled,
        "password_expires_at": None,
        "options": {},
        "links": {"self": f"{base}/v3/users/{u.id}"},
    }
    if u.default_project_id:
        out["default_project_id"] = u.default_project_id
    return out


def role(r: Role, base: str) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "domain_id": None,
        "description": r.description,
        "options": {},
        "links": {"self": f"{base}/v3/roles/{r.id}"},
    }


def assignment(
    a: Assignment,
    base: str,
    names: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A ``role_assignments`` item; with ``names`` (id -> name) as ``include_names`` asks."""

    def ref(ident: str, domain_scoped: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"id": ident}
        if names is not None:
            out["name"] = names.get(ident, "")
            if domain_scoped:
                out["domain"] = domain_ref()
        return out

    if a.target_id == SYSTEM_TARGET:
        scope: dict[str, Any] = {"system": {"all": True}}
        link = f"{base}/v3/system/users/{a.user_id}/roles/{a.role_id}"
    else:
        scope = {"project": ref(a.target_id, True)}
        link = f"{base}/v3/projects/{a.target_id}/users/{a.user_id}/roles/{a.role_id}"
    return {
        "role": ref(a.role_id, False),
        "user": ref(a.user_id, True),
        "scope": scope,
        "links": {"assignment": link},
    }
