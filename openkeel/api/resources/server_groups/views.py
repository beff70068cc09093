"""Response bodies of os-server-groups per microversion: ``policies`` and an empty
``metadata`` before 2.64, ``policy`` and ``rules`` from 2.64; ``project_id``/``user_id``
from 2.13."""

from __future__ import annotations

from typing import Any

from openkeel.domain.server_groups import ServerGroup


def _fields(group: ServerGroup, modern: bool, owners: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"id": group.uuid, "name": group.name}
    if modern:
        body["policy"] = group.policy
        body["rules"] = group.typed_rules
    else:
        body["policies"] = [group.policy] if group.policy else []
        body["metadata"] = {}
    body["members"] = list(group.members)
    if owners:
        body["project_id"] = group.project_id
        body["user_id"] = group.user_id
    return body


def server_group_list(groups: list[ServerGroup], modern: bool, owners: bool) -> dict[str, Any]:
    """``{"server_groups": [...]}``."""
    return {"server_groups": [_fields(g, modern, owners) for g in groups]}


def server_group_detail(group: ServerGroup, modern: bool, owners: bool) -> dict[str, Any]:
    """``{"server_group": {...}}`` (show and create)."""
    return {"server_group": _fields(group, modern, owners)}
