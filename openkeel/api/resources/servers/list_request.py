"""``GET /servers`` query -> ``ListQuery`` with Nova's rules: options a non-admin may not use
are dropped, joined-table and ``_`` filters refused, status/changes-*/deleted/all_tenants/
locked/tags/sort interpreted per microversion, with Nova's 400/403 messages.

Called by ``handlers_read.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.servers import list_options as opts
from openkeel.api.usecases.servers.listing import (
    FAULT_IF_SHOWN,
    LOCKED_REASON,
    InstanceFilters,
    ListQuery,
)
from openkeel.domain.errors import Forbidden, Invalid
from openkeel.domain.states import states_from_statuses

POLICY = "os_compute_api:servers:%s"
_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")
_REGEX_COLUMNS = (
    "kernel_id", "ramdisk_id", "hostname", "key_name", "power_state", "launched_at",
    "terminated_at", "display_description", "locked_by", "root_device_name", "config_drive",
    "access_ip_v4", "access_ip_v6", "auto_disk_config", "progress", "created_at",
    "display_name",
)  # fmt: skip


def strict_bool(value: str) -> bool:
    """oslo's strict ``bool_from_string`` with Nova's InvalidInput message."""
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    acceptable = ", ".join(f"'{s}'" for s in sorted(_TRUE + _FALSE))
    raise Invalid(
        f"Invalid input received: Unrecognized value '{value}', acceptable values are: {acceptable}"
    )


def loose_bool(value: str) -> bool:
    return value.strip().lower() in _TRUE


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed


def _search_options(req: ApiRequest) -> dict[str, str]:
    # Nova copies the query into a dict: a repeated parameter keeps its last value.
    search = {name: values[-1] for name, values in req.query.items() if values}
    if req.context.can(POLICY % "allow_all_filters", fatal=False):
        for name in opts.PAGING_SORTING:
            search.pop(name, None)
        return search
    allowed = opts.user_filters(req.at_least)
    return {k: v for k, v in search.items() if k in allowed}


def _cell_down_support(req: ApiRequest, search: dict[str, str]) -> bool:
    if not req.at_least("2.69"):
        return False
    if any(name in req.query for name in opts.PAGING_SORTING):
        return False
    return sorted(search) in ([], ["all_tenants"])


def _sort(req: ApiRequest) -> tuple[list[str], list[str]]:
    keys = list(req.query.get("sort_key", []))
    dirs = list(req.query.get("sort_dir", []))
    if not keys:
        keys = ["created_at"]
    if not dirs:
        dirs = ["desc"]
    ignored = opts.IGNORED_SORT_KEYS_V273 if req.at_least("2.73") else opts.IGNORED_SORT_KEYS
    for key in list(keys):
        if key in ignored:
            index = keys.index(key)
            if len(dirs) > index:
                dirs.pop(index)
            keys.pop(index)
        elif key in opts.ADMIN_ONLY_SORT_KEYS and not req.context.is_admin:
            raise Forbidden(f"Only administrators can sort servers by {key}")
    return keys, dirs


def _changes(search: dict[str, str]) -> tuple[datetime | None, datetime | None]:
    since = before = None
    if "changes-since" in search:
        try:
            since = _parse_time(search["changes-since"])
        except ValueError:
            raise Invalid("Invalid filter field: changes-since.") from None
    if "changes-before" in search:
        try:
            before = _parse_time(search["changes-before"])
        except ValueError:
            raise Invalid("Invalid filter field: changes-before.") from None
        if since is not None and before < since:
            raise Invalid(
                "The value of changes-since must be less than or equal to changes-before."
            )
    return since, before


def _tags(req: ApiRequest, search: dict[str, str], name: str) -> tuple[str, ...]:
    if not req.at_least("2.26") or name not in search:
        return ()
    return tuple(search[name].split(","))


def list_query(req: ApiRequest, detail: bool) -> ListQuery:
    """Interpret the validated query of ``GET /servers[/detail]``."""
    search = _search_options(req)
    down_support = _cell_down_support(req, search)
    for name in search:
        if name in opts.JOINED_TABLE_FILTERS or name.startswith("_"):
            raise Invalid(f"Invalid filter field: {name}.")
    status = None
    if "status" in req.query and "status" in search:
        status = states_from_statuses(req.query["status"])
        if status.matches_nothing:
            if req.at_least("2.38"):
                raise Invalid("Invalid status value")
            return ListQuery(InstanceFilters(), empty_status=True)
    since, before = _changes(search)
    deleted: bool | None = False
    if "deleted" in search:
        deleted = loose_bool(search["deleted"])
    elif since is not None or before is not None:
        deleted = None
    if search.get("vm_state") == "deleted":
        if not req.context.is_admin:
            raise Forbidden("Only administrators may list deleted instances")
        deleted = True
    all_tenants = _all_tenants(search)
    if all_tenants:
        action = "detail:get_all_tenants" if detail else "index:get_all_tenants"
        req.context.can(POLICY % action)
    keys, dirs = _sort(req)
    filters = _filters(req, search, status, since, before, deleted, all_tenants)
    limit = _limit(req)
    return ListQuery(
        filters,
        flavor_ref=search.get("flavor"),
        limit=limit,
        marker=req.query_value("marker"),
        sort_keys=tuple(keys),
        sort_dirs=tuple(dirs),
        all_tenants=all_tenants,
        cell_down_support=down_support,
        relations=_relations(req, detail),
    )


def _relations(req: ApiRequest, detail: bool) -> frozenset[str]:
    """What the page's view shows besides the instance rows (the brief list: nothing)."""
    if not detail:
        return frozenset()
    needed = {"metadata", "tags", "security_groups", FAULT_IF_SHOWN}
    if req.at_least("2.98"):
        needed.add("system_metadata")  # the image properties are kept there
    elif req.at_least("2.73"):
        needed.add(LOCKED_REASON)
    return frozenset(needed)


def _all_tenants(search: dict[str, str]) -> bool:
    if "all_tenants" not in search:
        return False
    value = search["all_tenants"]
    return strict_bool(value) if value else True


def _limit(req: ApiRequest) -> int:
    max_limit = int(req.services.conf.api.max_limit)
    raw = req.query_value("limit")
    return min(max_limit, int(raw)) if raw is not None else max_limit


def _filters(
    req: ApiRequest,
    search: dict[str, str],
    status: Any,
    since: datetime | None,
    before: datetime | None,
    deleted: bool | None,
    all_tenants: bool,
) -> InstanceFilters:
    ctx = req.context
    project_id = search.get("project_id")
    if all_tenants:
        project_id = project_id or search.get("tenant_id")
    elif ctx.project_id:
        project_id = ctx.project_id
    regex = {name: search[name] for name in _REGEX_COLUMNS if name in search}
    exact: dict[str, Any] = {}
    if "launch_index" in search:
        exact["launch_index"] = search["launch_index"]
    soft_deleted = loose_bool(search["soft_deleted"]) if "soft_deleted" in search else None
    return InstanceFilters(
        project_id=project_id,
        user_id=search.get("user_id") or (None if ctx.project_id else ctx.user_id),
        uuids=[search["uuid"]] if "uuid" in search else None,
        name=search.get("name"),
        status=status,
        vm_states=[search["vm_state"]] if "vm_state" in search and status is None else None,
        task_states=[search["task_state"]] if "task_state" in search and status is None else None,
        host=search.get("host"),
        node=search.get("node"),
        image_ref=search.get("image") or search.get("image_ref"),
        reservation_id=search.get("reservation_id"),
        availability_zone=search.get("availability_zone"),
        locked=strict_bool(search["locked"]) if "locked" in search else None,
        deleted=deleted,
        soft_deleted=soft_deleted,
        changes_since=since,
        changes_before=before,
        tags=_tags(req, search, "tags"),
        tags_any=_tags(req, search, "tags-any"),
        not_tags=_tags(req, search, "not-tags"),
        not_tags_any=_tags(req, search, "not-tags-any"),
        ip=search.get("ip"),
        ip6=search.get("ip6") if req.at_least("2.5") else None,
        regex=regex,
        exact=exact,
    )
