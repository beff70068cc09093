"""``GET /servers/{id}``, ``GET /servers`` and ``GET /servers/detail`` handlers."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import list_request, views_list, views_server
from openkeel.api.resources.servers.show_options import (
    POLICY,
    host_status_mode,
    show_options,
    wanted,
)
from openkeel.api.usecases.servers.gathering import RecordGatherer
from openkeel.api.usecases.servers.listing import ServerLister
from openkeel.api.usecases.servers.records import ServerRecord
from openkeel.api.usecases.servers.showing import ServerShowing


def show_server(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/{id} (one reader transaction per database for the whole request)."""
    with ServerShowing(req.services, req.context) as showing:
        found = showing.find(req.params["id"], down_ok=req.at_least("2.69"))
        project_id = found.instance.project_id
        req.context.can(POLICY % "show", {"project_id": project_id})
        groups = req.at_least("2.71")
        opts = show_options(req, project_id, server_groups=groups)
        need = wanted(req, host_status_mode(req, project_id), groups)
        record = showing.record(found, need)
    return {"server": views_server.server(req, record, opts)}


def _max_limit(req: ApiRequest) -> int:
    return int(req.services.conf.api.max_limit)


def list_servers(req: ApiRequest) -> dict[str, Any]:
    """GET /servers."""
    req.context.can(POLICY % "index")
    query = list_request.list_query(req, detail=False)
    page = ServerLister(req.services, req.context).page(query)
    if page.empty_status:
        return {"servers": []}
    # The brief list shows only ids, names and links: no related facts to gather.
    records = [ServerRecord(item.instance, down=item.down) for item in page.located]
    return views_list.index(req, records, _max_limit(req))


def list_servers_detail(req: ApiRequest) -> dict[str, Any]:
    """GET /servers/detail."""
    req.context.can(POLICY % "detail")
    query = list_request.list_query(req, detail=True)
    page = ServerLister(req.services, req.context).page(query)
    if page.empty_status:
        return {"servers": []}
    opts = show_options(req, None)
    opts = views_server.ShowOptions(**{**opts.__dict__, "user_data": True})
    need = wanted(req, host_status_mode(req, None), False)
    records = RecordGatherer(req.services).gather(page.located, need)
    return views_list.detail(req, records, opts, _max_limit(req))
