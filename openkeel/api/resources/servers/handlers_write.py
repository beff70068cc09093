"""``PUT /servers/{id}`` and ``DELETE /servers/{id}`` handlers."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import views_server
from openkeel.api.resources.servers.access_ips import access_ips
from openkeel.api.resources.servers.create_request import normalize_name
from openkeel.api.resources.servers.show_options import (
    POLICY,
    host_status_mode,
    show_options,
    wanted,
)
from openkeel.api.usecases.servers.gathering import Located, RecordGatherer
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle
from openkeel.api.usecases.servers.update import UpdateServer, update_server
from openkeel.domain.instances import UNSET, InstanceUpdate


def _changes(req: ApiRequest) -> UpdateServer:
    server = req.body["server"]
    values: dict[str, Any] = {}
    if "name" in server:
        values["display_name"] = normalize_name(server["name"])
    if "description" in server:
        values["display_description"] = server["description"]
    if "hostname" in server:
        values["hostname"] = server["hostname"]
    values.update(access_ips(server))
    if "OS-DCF:diskConfig" in server:
        values["auto_disk_config"] = server["OS-DCF:diskConfig"] == "AUTO"
    pinned = server.get("pinned_availability_zone", UNSET) if req.at_least("2.104") else UNSET
    return UpdateServer(InstanceUpdate(**values), pinned)


def update_server_handler(req: ApiRequest) -> dict[str, Any]:
    """PUT /servers/{id}."""
    lifecycle = ServerLifecycle(req.services, req.context)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize("update", found)
    updated = update_server(req.services, req.context, found, _changes(req))
    full = req.at_least("2.75")
    groups = req.at_least("2.71")
    opts = show_options(req, updated.project_id, full=full, server_groups=groups)
    opts = views_server.ShowOptions(**{**opts.__dict__, "security_groups": full})
    host_status = host_status_mode(req, updated.project_id) if full else None
    need = wanted(req, host_status, groups)
    record = RecordGatherer(req.services).gather([Located(updated, found.cell_uuid)], need)
    return {"server": views_server.server(req, record[0], opts)}


def delete_server(req: ApiRequest) -> None:
    """DELETE /servers/{id}."""
    lifecycle = ServerLifecycle(req.services, req.context)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize("delete", found)
    lifecycle.delete(found)


__all__ = ["POLICY", "delete_server", "update_server_handler"]
