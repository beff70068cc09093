"""Handlers of a server's security groups: list, add, remove."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.security_groups import POLICY, ServerSecurityGroups
from openkeel.domain.errors import Invalid

__all__ = ["POLICY", "add_security_group", "list_server_security_groups", "remove_security_group"]


def list_server_security_groups(req: ApiRequest) -> dict[str, Any]:
    groups = ServerSecurityGroups(req.services, req.context).list(req.params["server_id"])
    return {"security_groups": groups}


def _name(req: ApiRequest, key: str) -> str:
    name = str(req.body[key]["name"])
    if not name.strip():
        raise Invalid("Security group name cannot be empty")
    return name


def add_security_group(req: ApiRequest) -> None:
    name = _name(req, "addSecurityGroup")
    ServerSecurityGroups(req.services, req.context).add(req.params["id"], name)


def remove_security_group(req: ApiRequest) -> None:
    name = _name(req, "removeSecurityGroup")
    ServerSecurityGroups(req.services, req.context).remove(req.params["id"], name)
