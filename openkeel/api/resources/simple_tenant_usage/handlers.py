"""GET /os-simple-tenant-usage (admin: every project) and /os-simple-tenant-usage/{id} (the
project's own), as Nova answers them: dates in Nova's format, hours and totals as floats,
``server_usages`` when detailed (always for one project), next links from 2.40."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.api.usecases import tenant_usage
from openkeel.domain.errors import Invalid

POLICY = "os_compute_api:os-simple-tenant-usage:%s"
COLLECTION = "/os-simple-tenant-usage"
FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%d %H:%M:%S.%f")
OUT = "%Y-%m-%dT%H:%M:%S.%f"  # oslo's PERFECT_TIME_FORMAT, as Nova serializes datetimes


def _one(req: ApiRequest, name: str) -> str | None:
    values = req.query.get(name) or []
    return str(values[-1]) if values else None


def _when(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC).replace(tzinfo=None)
    for fmt in FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise Invalid("Invalid datetime string: Datetime is in invalid format")


def _period(req: ApiRequest) -> tuple[datetime, datetime]:
    start, stop = _when(_one(req, "start")), _when(_one(req, "end"))
    if not start < stop:
        raise Invalid("Invalid start time. The start time cannot occur after the end time.")
    return start, stop


def _paging(req: ApiRequest) -> tuple[int | None, str | None]:
    if not req.at_least("2.40"):
        return None, None
    max_limit = int(req.services.conf.api.max_limit)
    given = _one(req, "limit")
    limit = min(max_limit, int(given)) if given not in (None, "") else max_limit
    return limit, _one(req, "marker")


def _date(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime(OUT)


def _server(usage: tenant_usage.ServerUsage, now: datetime) -> dict[str, Any]:
    inst = usage.instance
    flavor = inst.flavor
    started, ended = inst.launched_at, inst.terminated_at
    state = "terminated" if ended else inst.vm_state
    since = started.replace(tzinfo=None) if started else now
    uptime = ((ended.replace(tzinfo=None) if ended else now) - since).total_seconds()
    return {
        "instance_id": inst.uuid,
        "name": inst.display_name,
        "hours": usage.hours,
        "memory_mb": flavor.memory_mb,
        "local_gb": usage.local_gb,
        "vcpus": flavor.vcpus,
        "tenant_id": inst.project_id,
        "flavor": flavor.name,
        "started_at": _date(started),
        "ended_at": _date(ended),
        "state": state,
        "uptime": int(uptime),
    }


def _tenant(
    usage: tenant_usage.TenantUsage, start: datetime, stop: datetime, detailed: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "tenant_id": usage.tenant_id,
        "total_local_gb_usage": usage.total("local_gb"),
        "total_vcpus_usage": usage.total("vcpus"),
        "total_memory_mb_usage": usage.total("memory_mb"),
        "total_hours": usage.hours,
        "start": _date(start),
        "stop": _date(stop),
    }
    if detailed:
        now = datetime.now(UTC).replace(tzinfo=None)
        body["server_usages"] = [_server(s, now) for s in usage.servers]
    return body


def _links(
    req: ApiRequest, path: str, servers: list[tenant_usage.ServerUsage], limit: int | None
) -> list[dict[str, str]] | None:
    if limit is None or not servers or len(servers) != limit:
        return None
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = servers[-1].instance.uuid
    return [{"rel": "next", "href": f"{req.self_link(path)}?{urlencode(params)}"}]


def index(req: ApiRequest) -> dict[str, Any]:
    req.context.can(POLICY % "list")
    start, stop = _period(req)
    detailed = _one(req, "detailed") == "1"
    limit, marker = _paging(req)
    usages, servers = tenant_usage.usage(req.services, start, stop, limit=limit, marker=marker)
    body: dict[str, Any] = {"tenant_usages": [_tenant(u, start, stop, detailed) for u in usages]}
    links = _links(req, COLLECTION.lstrip("/"), servers, limit)
    if links:
        body["tenant_usages_links"] = links
    return body


def show(req: ApiRequest) -> dict[str, Any]:
    project_id = req.params["id"]
    req.context.can(POLICY % "show", {"project_id": project_id})
    start, stop = _period(req)
    limit, marker = _paging(req)
    usages, servers = tenant_usage.usage(
        req.services, start, stop, project_id=project_id, limit=limit, marker=marker
    )
    body: dict[str, Any] = {"tenant_usage": _tenant(usages[0], start, stop, True) if usages else {}}
    links = _links(req, f"{COLLECTION.lstrip('/')}/{project_id}", servers, limit)
    if links:
        body["tenant_usage_links"] = links
    return body
