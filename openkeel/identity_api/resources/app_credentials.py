"""``/v3/users/{user_id}/application_credentials``: a user's delegations of their roles on one
project, used with a secret (clouds.yaml ``auth_type: v3applicationcredential``)."""

from __future__ import annotations

from typing import Any

from openkeel.identity_api.request import IdentityRequest, Reply, collection
from openkeel.identity_api.routing import Endpoint, RouteTable
from openkeel.identity_api.service import AppCredential

_ROLE_REF = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    "minProperties": 1,
}
CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["application_credential"],
    "properties": {
        "application_credential": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 255},
                "description": {"type": ["string", "null"]},
                "secret": {"type": ["string", "null"], "minLength": 1},
                "expires_at": {"type": ["string", "null"]},
                "roles": {"type": "array", "items": _ROLE_REF},
                "unrestricted": {"type": ["boolean", "null"]},
                "access_rules": {"type": "array", "maxItems": 0},
            },
        }
    },
}


def _view(req: IdentityRequest, credential: AppCredential) -> dict[str, Any]:
    roles = req.service.role_names(credential.role_ids)
    expires = credential.expires_at
    return {
        "id": credential.id,
        "name": credential.name,
        "user_id": credential.user_id,
        "project_id": credential.project_id,
        "description": credential.description,
        "expires_at": None if expires is None else expires.strftime("%Y-%m-%dT%H:%M:%S.%f"),
        "unrestricted": credential.unrestricted,
        "system": None,
        "access_rules": [],
        "roles": [{"id": r.id, "name": r.name, "domain_id": None} for r in roles],
        "links": {
            "self": f"{req.base}/v3/users/{credential.user_id}/application_credentials/"
            f"{credential.id}"
        },
    }


def create(req: IdentityRequest) -> Reply:
    ref = req.json(CREATE_SCHEMA)["application_credential"]
    credential, secret = req.service.create_app_credential(req.caller, req.params["user_id"], ref)
    return Reply({"application_credential": {**_view(req, credential), "secret": secret}}, 201)


def list_credentials(req: IdentityRequest) -> Reply:
    user_id = req.params["user_id"]
    found = req.service.app_credentials(req.caller, user_id, req.value("name"))
    items = [_view(req, c) for c in found]
    return collection(req, "application_credentials", items,
                      f"users/{user_id}/application_credentials")  # fmt: skip


def show(req: IdentityRequest) -> Reply:
    credential = req.service.get_app_credential(
        req.caller, req.params["user_id"], req.params["credential_id"]
    )
    return Reply({"application_credential": _view(req, credential)})


def delete(req: IdentityRequest) -> Reply:
    req.service.delete_app_credential(
        req.caller, req.params["user_id"], req.params["credential_id"]
    )
    return Reply(None, 204)


def register(table: RouteTable) -> None:
    collection_path = "/v3/users/{user_id}/application_credentials"
    member = collection_path + "/{credential_id}"
    table.add("POST", collection_path, Endpoint(create))
    table.add("GET", collection_path, Endpoint(list_credentials))
    table.add("GET", member, Endpoint(show))
    table.add("DELETE", member, Endpoint(delete))
