"""``POST /servers`` handler: request -> command -> use case -> 202 answer with Location."""

from __future__ import annotations

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.resources.servers import views_list
from openkeel.api.resources.servers.create_request import create_command
from openkeel.api.usecases.servers.create import ServerCreator


def create_server(req: ApiRequest) -> Reply:
    """POST /servers."""
    command = create_command(req)
    created = ServerCreator(req.services, req.context).create(command)
    if command.return_reservation_id:
        return Reply({"reservation_id": created.reservation_id})
    groups = req.body["server"].get("security_groups")
    conf = req.services.conf
    password = created.admin_pass if conf.api.enable_instance_password else None
    body = views_list.created(req, created.first_uuid, created.auto_disk_config, groups, password)
    location = body["server"]["links"][0]["href"]
    return Reply(body, headers=[("Location", location)])
