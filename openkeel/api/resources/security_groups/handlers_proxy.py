"""Handlers of the ``os-security-groups`` and ``os-security-group-rules`` proxies (2.1-2.35)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.security_group_proxy import RuleRequest, SecurityGroupProxy


def _proxy(req: ApiRequest) -> SecurityGroupProxy:
    return SecurityGroupProxy(req.services, req.context)


def _int(req: ApiRequest, name: str) -> int | None:
    value = req.query_value(name)
    return int(value) if value else None


def list_security_groups(req: ApiRequest) -> dict[str, Any]:
    groups = _proxy(req).list("all_tenants" in req.query, _int(req, "offset") or 0,
                              _int(req, "limit"), int(req.services.conf.api.max_limit))  # fmt: skip
    return {"security_groups": groups}


def show_security_group(req: ApiRequest) -> dict[str, Any]:
    return {"security_group": _proxy(req).show(req.params["id"])}


def create_security_group(req: ApiRequest) -> dict[str, Any]:
    wanted = req.body["security_group"]
    return {"security_group": _proxy(req).create(wanted["name"], wanted["description"])}


def update_security_group(req: ApiRequest) -> dict[str, Any]:
    wanted = req.body["security_group"]
    group = _proxy(req).update(req.params["id"], wanted["name"], wanted["description"])
    return {"security_group": group}


def delete_security_group(req: ApiRequest) -> None:
    _proxy(req).delete(req.params["id"])


def create_security_group_rule(req: ApiRequest) -> dict[str, Any]:
    wanted = req.body["security_group_rule"]
    request = RuleRequest(
        parent_group_id=wanted["parent_group_id"], group_id=wanted.get("group_id"),
        ip_protocol=wanted.get("ip_protocol"), from_port=wanted.get("from_port"),
        to_port=wanted.get("to_port"), cidr=wanted.get("cidr"),
    )  # fmt: skip
    return {"security_group_rule": _proxy(req).create_rule(request)}


def delete_security_group_rule(req: ApiRequest) -> None:
    _proxy(req).delete_rule(req.params["id"])
