"""Handlers of ``rescue`` (200 with ``adminPass`` unless ``[api] enable_instance_password`` is
false) and ``unrescue`` (202): 404 unknown server, 403 policy, 409 locked or wrong state, 400
for an image or server that cannot be rescued."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.rescue import ServerRescuer
from openkeel.api.usecases.servers.create import generate_password

RESCUE_POLICY = "os_compute_api:os-rescue"
UNRESCUE_POLICY = "os_compute_api:os-unrescue"


def rescue_server(req: ApiRequest) -> dict[str, Any]:
    """rescue (policy target: the server's project and user)."""
    body = req.body["rescue"] or {}
    conf = req.services.conf
    password = body.get("adminPass") or generate_password(int(conf.password_length))
    rescuer = ServerRescuer(req.services, req.context)
    found = rescuer.find(req.params["id"])
    rescuer.authorize(RESCUE_POLICY, found, with_user=True)
    rescuer.rescue(found, password, body.get("rescue_image_ref"), req.at_least("2.87"))
    if conf.api.enable_instance_password:
        return {"adminPass": password}
    return {}


def unrescue_server(req: ApiRequest) -> None:
    """unrescue (policy target: the server's project)."""
    rescuer = ServerRescuer(req.services, req.context)
    found = rescuer.find(req.params["id"])
    rescuer.authorize(UNRESCUE_POLICY, found)
    rescuer.unrescue(found)
