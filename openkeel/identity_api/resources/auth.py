"""``/v3/auth/*``: issue, validate and revoke tokens; what a token may reach."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.identity_api import views
from openkeel.identity_api.catalog import token_catalog
from openkeel.identity_api.faults import NotFound
from openkeel.identity_api.request import IdentityRequest, Reply, collection
from openkeel.identity_api.routing import Endpoint, RouteTable
from openkeel.identity_api.service import Caller

_REF = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
AUTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["auth"],
    "properties": {
        "auth": {
            "type": "object",
            "required": ["identity"],
            "properties": {
                "identity": {
                    "type": "object",
                    "required": ["methods"],
                    "properties": {
                        "methods": {"type": "array", "items": {"type": "string"}},
                        "password": {
                            "type": "object",
                            "properties": {
                                "user": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string"},
                                        "name": {"type": "string"},
                                        "password": {"type": "string"},
                                        "domain": _REF,
                                    },
                                }
                            },
                        },
                        "token": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {"id": {"type": "string"}},
                        },
                        "application_credential": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "name": {"type": "string"},
                                "secret": {"type": "string"},
                                "user": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string"},
                                        "name": {"type": "string"},
                                        "domain": _REF,
                                    },
                                },
                            },
                        },
                    },
                },
                "scope": {
                    "oneOf": [
                        {"type": "string", "enum": ["unscoped"]},
                        {
                            "type": "object",
                            "properties": {
                                "project": {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string"},
                                        "name": {"type": "string"},
                                        "domain": _REF,
                                    },
                                },
                                "domain": _REF,
                                "system": {"type": "object"},
                            },
                        },
                    ]
                },
            },
        }
    },
}


def _stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def token_document(req: IdentityRequest, caller: Caller) -> dict[str, Any]:
    """Keystone's token body for ``caller`` (the catalog unless ``?nocatalog``)."""
    payload = caller.payload
    token: dict[str, Any] = {
        "methods": list(payload.methods),
        "user": {
            "id": caller.user.id,
            "name": caller.user.name,
            "domain": views.domain_ref(),
            "password_expires_at": None,
        },
        "audit_ids": list(payload.audit_ids),
        "expires_at": _stamp(payload.expires_at),
        "issued_at": _stamp(payload.issued_at),
    }
    if caller.project is not None:
        token["project"] = {
            "id": caller.project.id,
            "name": caller.project.name,
            "domain": views.domain_ref(),
        }
        token["is_domain"] = False
    elif payload.system:
        token["system"] = {"all": True}
    if caller.app_credential is not None:
        token["application_credential"] = {
            "id": caller.app_credential.id,
            "name": caller.app_credential.name,
            "restricted": not caller.app_credential.unrestricted,
        }
    if caller.project is not None or payload.system:
        token["roles"] = [{"id": r.id, "name": r.name} for r in caller.roles]
        if not req.has("nocatalog"):
            token["catalog"] = token_catalog(req.service.catalog, req.root)
    return {"token": token}


def issue(req: IdentityRequest) -> Reply:
    body = req.json(AUTH_SCHEMA)
    caller = req.service.authenticate(body["auth"])
    return Reply(token_document(req, caller), 201, [("X-Subject-Token", caller.token)])


def _subject(req: IdentityRequest) -> str:
    subject = req.headers.get("x-subject-token", "").strip()
    if not subject:
        raise NotFound("Could not find token: .")
    return subject


def validate(req: IdentityRequest) -> Reply:
    found = req.service.validate_subject(req.caller, _subject(req))
    return Reply(token_document(req, found), 200, [("X-Subject-Token", found.token)])


def check(req: IdentityRequest) -> Reply:
    found = req.service.validate_subject(req.caller, _subject(req))
    return Reply(None, 200, [("X-Subject-Token", found.token)])


def revoke(req: IdentityRequest) -> Reply:
    req.service.revoke(req.caller, _subject(req))
    return Reply(None, 204)


def catalog(req: IdentityRequest) -> Reply:
    caller = req.caller
    entries = req.service.catalog if caller.roles else ()
    return Reply({"catalog": token_catalog(entries, req.root),
                  "links": {"self": f"{req.base}/v3/auth/catalog", "previous": None,
                            "next": None}})  # fmt: skip


def projects(req: IdentityRequest) -> Reply:
    found = req.service.projects_of(req.caller.user.id)
    return collection(req, "projects", [views.project(p, req.base) for p in found], "auth/projects")


def domains(req: IdentityRequest) -> Reply:
    # Roles on domains are not offered: no token can be scoped to one.
    return collection(req, "domains", [], "auth/domains")


def system(req: IdentityRequest) -> Reply:
    found = [{"all": True}] if req.service.has_system_role(req.caller.user.id) else []
    return Reply({"system": found,
                  "links": {"self": f"{req.base}/v3/auth/system", "previous": None,
                            "next": None}})  # fmt: skip


def register(table: RouteTable) -> None:
    table.add("POST", "/v3/auth/tokens", Endpoint(issue, anonymous=True))
    table.add("GET", "/v3/auth/tokens", Endpoint(validate))
    table.add("HEAD", "/v3/auth/tokens", Endpoint(check))
    table.add("DELETE", "/v3/auth/tokens", Endpoint(revoke))
    table.add("GET", "/v3/auth/catalog", Endpoint(catalog))
    table.add("GET", "/v3/auth/projects", Endpoint(projects))
    table.add("GET", "/v3/auth/domains", Endpoint(domains))
    table.add("GET", "/v3/auth/system", Endpoint(system))
