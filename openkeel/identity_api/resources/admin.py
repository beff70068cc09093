"""Projects, users, roles and role assignments (``/v3/projects``, ``/v3/users``,
``/v3/roles``, the grant paths and ``/v3/role_assignments``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.identity_api import views
from openkeel.identity_api.request import IdentityRequest, Reply, collection
from openkeel.identity_api.routing import Endpoint, RouteTable
from openkeel.identity_api.service import SYSTEM_TARGET

_STR = {"type": "string"}
_NULLABLE_STR = {"type": ["string", "null"]}
_BOOL = {"type": "boolean"}
_NAME = {"type": "string", "minLength": 1, "maxLength": 64}
_TAGS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 255}}
PROJECT_FIELDS = {
    "name": _NAME, "description": _NULLABLE_STR, "enabled": _BOOL, "domain_id": _NULLABLE_STR,
    "parent_id": _NULLABLE_STR, "is_domain": _BOOL, "tags": _TAGS,
}  # fmt: skip
USER_FIELDS = {
    "name": {"type": "string", "minLength": 1, "maxLength": 255}, "password": _NULLABLE_STR,
    "enabled": _BOOL, "domain_id": _NULLABLE_STR, "default_project_id": _NULLABLE_STR,
}  # fmt: skip
ROLE_FIELDS = {
    "name": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": _NULLABLE_STR, "domain_id": _NULLABLE_STR,
}  # fmt: skip
# What a user's answer shows from the service itself; anything else a client sends is kept.
_USER_OWN = {*USER_FIELDS, "id", "links", "options", "password_expires_at"}


def _schema(key: str, fields: Mapping[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [key],
        "properties": {
            key: {"type": "object", "properties": dict(fields), "required": list(required)}
        },
    }


def _filters(req: IdentityRequest) -> dict[str, Any]:
    return {"name": req.value("name"), "domain_id": req.value("domain_id"),
            "enabled": req.flag("enabled")}  # fmt: skip


# -- projects ---------------------------------------------------------------------------------


def list_projects(req: IdentityRequest) -> Reply:
    found = req.service.list_projects(req.caller, _filters(req))
    return collection(req, "projects", [views.project(p, req.base) for p in found])


def create_project(req: IdentityRequest) -> Reply:
    ref = req.json(_schema("project", PROJECT_FIELDS, ("name",)))["project"]
    project = req.service.create_project(req.caller, ref)
    return Reply({"project": views.project(project, req.base)}, 201)


def show_project(req: IdentityRequest) -> Reply:
    project = req.service.get_project(req.caller, req.params["project_id"])
    return Reply({"project": views.project(project, req.base)})


def update_project(req: IdentityRequest) -> Reply:
    ref = req.json(_schema("project", PROJECT_FIELDS, ()))["project"]
    project = req.service.update_project(req.caller, req.params["project_id"], ref)
    return Reply({"project": views.project(project, req.base)})


def delete_project(req: IdentityRequest) -> Reply:
    req.service.delete_project(req.caller, req.params["project_id"])
    return Reply(None, 204)


# -- users ------------------------------------------------------------------------------------


def _user_ref(
    req: IdentityRequest, required: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    ref = req.json(_schema("user", USER_FIELDS, required))["user"]
    extra = {k: v for k, v in ref.items() if k not in _USER_OWN}
    return ref, extra


def list_users(req: IdentityRequest) -> Reply:
    found = req.service.list_users(req.caller, _filters(req))
    return collection(req, "users", [views.user(u, req.base) for u in found])


def create_user(req: IdentityRequest) -> Reply:
    ref, extra = _user_ref(req, ("name",))
    user = req.service.create_user(req.caller, ref, extra)
    return Reply({"user": views.user(user, req.base)}, 201)


def show_user(req: IdentityRequest) -> Reply:
    user = req.service.get_user(req.caller, req.params["user_id"])
    return Reply({"user": views.user(user, req.base)})


def update_user(req: IdentityRequest) -> Reply:
    ref, extra = _user_ref(req, ())
    user = req.service.update_user(req.caller, req.params["user_id"], ref, extra)
    return Reply({"user": views.user(user, req.base)})


def delete_user(req: IdentityRequest) -> Reply:
    req.service.delete_user(req.caller, req.params["user_id"])
    return Reply(None, 204)


PASSWORD_SCHEMA = _schema(
    "user", {"password": _STR, "original_password": _STR}, ("password", "original_password")
)


def change_password(req: IdentityRequest) -> Reply:
    ref = req.json(PASSWORD_SCHEMA)["user"]
    req.service.change_password(
        req.caller, req.params["user_id"], ref["original_password"], ref["password"]
    )
    return Reply(None, 204)


def user_projects(req: IdentityRequest) -> Reply:
    user_id = req.params["user_id"]
    found = req.service.user_projects(req.caller, user_id)
    items = [views.project(p, req.base) for p in found]
    return collection(req, "projects", items, f"users/{user_id}/projects")


def user_groups(req: IdentityRequest) -> Reply:
    req.service.get_user(req.caller, req.params["user_id"])  # 403 / 404 as Keystone
    return collection(req, "groups", [], f"users/{req.params['user_id']}/groups")


# -- roles ------------------------------------------------------------------------------------


def list_roles(req: IdentityRequest) -> Reply:
    found = req.service.list_roles(req.caller, req.value("name"))
    return collection(req, "roles", [views.role(r, req.base) for r in found])


def create_role(req: IdentityRequest) -> Reply:
    ref = req.json(_schema("role", ROLE_FIELDS, ("name",)))["role"]
    return Reply({"role": views.role(req.service.create_role(req.caller, ref), req.base)}, 201)


def show_role(req: IdentityRequest) -> Reply:
    return Reply({"role": views.role(req.service.get_role(req.caller, req.params["role_id"]),
                                     req.base)})  # fmt: skip


def update_role(req: IdentityRequest) -> Reply:
    ref = req.json(_schema("role", ROLE_FIELDS, ()))["role"]
    role = req.service.update_role(req.caller, req.params["role_id"], ref)
    return Reply({"role": views.role(role, req.base)})


def delete_role(req: IdentityRequest) -> Reply:
    req.service.delete_role(req.caller, req.params["role_id"])
    return Reply(None, 204)


# -- grants -----------------------------------------------------------------------------------


def _target(req: IdentityRequest) -> str:
    return req.params.get("project_id", SYSTEM_TARGET)


def list_grants(req: IdentityRequest) -> Reply:
    user_id, target = req.params["user_id"], _target(req)
    roles = req.service.grants(req.caller, target, user_id)
    where = "system" if target == SYSTEM_TARGET else f"projects/{target}"
    items = [views.role(r, req.base) for r in roles]
    return collection(req, "roles", items, f"{where}/users/{user_id}/roles")


def grant(req: IdentityRequest) -> Reply:
    req.service.grant(req.caller, _target(req), req.params["user_id"], req.params["role_id"])
    return Reply(None, 204)


def check_grant(req: IdentityRequest) -> Reply:
    req.service.check_grant(req.caller, _target(req), req.params["user_id"], req.params["role_id"])
    return Reply(None, 204)


def revoke_grant(req: IdentityRequest) -> Reply:
    req.service.revoke_grant(req.caller, _target(req), req.params["user_id"], req.params["role_id"])
    return Reply(None, 204)


def role_assignments(req: IdentityRequest) -> Reply:
    if (
        req.value("group.id")
        or req.value("scope.domain.id")
        or req.has("scope.OS-INHERIT:inherited_to")
    ):
        return collection(req, "role_assignments", [])  # no groups, domains or inheritance
    target = req.value("scope.project.id")
    if req.has("scope.system"):
        target = SYSTEM_TARGET
    found = req.service.role_assignments(
        req.caller, req.value("user.id"), target, req.value("role.id"), req.has("effective")
    )
    names = None
    if req.has("include_names") and req.flag("include_names"):
        names = req.service.names()
    items = [views.assignment(a, req.base, names) for a in found]
    return collection(req, "role_assignments", items)


def register(table: RouteTable) -> None:
    table.add("GET", "/v3/projects", Endpoint(list_projects))
    table.add("POST", "/v3/projects", Endpoint(create_project))
    table.add("GET", "/v3/projects/{project_id}", Endpoint(show_project))
    table.add("PATCH", "/v3/projects/{project_id}", Endpoint(update_project))
    table.add("DELETE", "/v3/projects/{project_id}", Endpoint(delete_project))
    table.add("GET", "/v3/users", Endpoint(list_users))
    table.add("POST", "/v3/users", Endpoint(create_user))
    table.add("GET", "/v3/users/{user_id}", Endpoint(show_user))
    table.add("PATCH", "/v3/users/{user_id}", Endpoint(update_user))
    table.add("DELETE", "/v3/users/{user_id}", Endpoint(delete_user))
    table.add("POST", "/v3/users/{user_id}/password", Endpoint(change_password))
    table.add("GET", "/v3/users/{user_id}/projects", Endpoint(user_projects))
    table.add("GET", "/v3/users/{user_id}/groups", Endpoint(user_groups))
    table.add("GET", "/v3/roles", Endpoint(list_roles))
    table.add("POST", "/v3/roles", Endpoint(create_role))
    table.add("GET", "/v3/roles/{role_id}", Endpoint(show_role))
    table.add("PATCH", "/v3/roles/{role_id}", Endpoint(update_role))
    table.add("DELETE", "/v3/roles/{role_id}", Endpoint(delete_role))
    for scope in ("/v3/projects/{project_id}", "/v3/system"):
        table.add("GET", f"{scope}/users/{{user_id}}/roles", Endpoint(list_grants))
        member = f"{scope}/users/{{user_id}}/roles/{{role_id}}"
        table.add("PUT", member, Endpoint(grant))
        table.add("GET", member, Endpoint(check_grant))
        table.add("DELETE", member, Endpoint(revoke_grant))
    table.add("GET", "/v3/role_assignments", Endpoint(role_assignments))
