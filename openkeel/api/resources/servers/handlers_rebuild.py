"""``POST /servers/{id}/action {"rebuild": ...}`` (202 with the server, and ``adminPass``)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import views_server
from openkeel.api.resources.servers.access_ips import access_ips
from openkeel.api.resources.servers.create_request import as_bool, normalize_name
from openkeel.api.resources.servers.show_options import host_status_mode, show_options, wanted
from openkeel.api.usecases.servers.gathering import Located, RecordGatherer
from openkeel.api.usecases.servers.rebuild import RebuildRequest, ServerRebuilder
from openkeel.domain.instances import UNSET


def _request(req: ApiRequest) -> RebuildRequest:
    body: dict[str, Any] = req.body["rebuild"]
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["display_name"] = normalize_name(body["name"])
    if "metadata" in body:
        changes["metadata"] = dict(body["metadata"])  # replaces the whole mapping, as Nova
    if "description" in body:  # 2.19
        changes["display_description"] = body["description"]
    if "hostname" in body:  # 2.90
        changes["hostname"] = body["hostname"]
    if "OS-DCF:diskConfig" in body:
        changes["auto_disk_config"] = body["OS-DCF:diskConfig"] == "AUTO"
    if "trusted_image_certificates" in body:  # 2.63
        certs = body["trusted_image_certificates"]
        changes["trusted_certs"] = tuple(certs) if certs else None
    changes.update(access_ips(body))
    return RebuildRequest(
        image_ref=str(body["imageRef"]),
        admin_pass=body.get("adminPass"),
        preserve_ephemeral=as_bool(body.get("preserve_ephemeral", False)),
        changes=changes,
        key_name=body.get("key_name", UNSET),  # 2.54
        user_data=body.get("user_data", UNSET),  # 2.57
        reimage_boot_volume=req.at_least("2.93"),
    )


def rebuild(req: ApiRequest) -> dict[str, Any]:
    """rebuild."""
    rebuilder = ServerRebuilder(req.services, req.context)
    found = rebuilder.find(req.params["id"])
    rebuilder.authorize("rebuild", found)
    rebuilt = rebuilder.rebuild(found, _request(req))
    updated = rebuilt.instance
    full = req.at_least("2.75")
    groups = req.at_least("2.71")
    opts = show_options(req, updated.project_id, full=full, server_groups=groups)
    # user data is the plain ``user_data`` key of the rebuild answer (2.57), never the admin's
    # OS-EXT-SRV-ATTR:user_data (Nova's rebuild view leaves it out)
    opts = views_server.ShowOptions(
        **{**opts.__dict__, "security_groups": full, "user_data": False}
    )
    host_status = host_status_mode(req, updated.project_id) if full else None
    record = RecordGatherer(req.services).gather(
        [Located(updated, found.cell_uuid)], wanted(req, host_status, groups)
    )
    server = views_server.server(req, record[0], opts)
    # Nova's rebuild answer adds these to the update-shaped body (2.54, 2.57).
    if req.at_least("2.54"):
        server["key_name"] = updated.key_name
    if req.at_least("2.57"):
        server["user_data"] = updated.user_data
    if req.services.conf.api.enable_instance_password:
        server["adminPass"] = rebuilt.admin_pass
    return {"server": server}
