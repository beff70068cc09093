"""``POST /servers/{id}/action {"evacuate": {...}}``: 200, ``{"adminPass"}`` before 2.14 (Nova's
answer; nothing after)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers.create_request import as_bool
from openkeel.api.usecases.evacuate import Evacuation, ServerEvacuator

POLICY = "os_compute_api:os-evacuate"


def evacuate(req: ApiRequest) -> dict[str, Any] | None:
    body: dict[str, Any] = req.body["evacuate"]
    evacuator = ServerEvacuator(req.services, req.context)
    found = evacuator.find(req.params["id"])
    req.context.can(POLICY, {"project_id": found.instance.project_id})
    force = as_bool(body.get("force", False)) if req.at_least("2.29") else False
    password = evacuator.evacuate(
        found,
        Evacuation(
            host=body.get("host"),
            admin_pass=body.get("adminPass"),
            force=force,
            stop=req.at_least("2.95"),
        ),
    )
    if req.at_least("2.14") or not req.services.conf.api.enable_instance_password:
        return None
    return {"adminPass": password}
