"""Server actions whose operations are not built yet (trigger_crash_dump): they
answer Nova's 404 (unknown server), 403 (policy) and 409 (wrong state) like Nova, then 501
instead of starting the operation."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.resources.migrate_server import handlers as resize_handlers
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle
from openkeel.domain.errors import NotImplementedYet
from openkeel.domain.states import ensure_action_allowed


def _refuse(req: ApiRequest, policy_action: str, gate: str, name: str) -> None:
    lifecycle = ServerLifecycle(req.services, req.context)
    found = lifecycle.find(req.params["id"])
    lifecycle.authorize(policy_action, found, with_user=policy_action != "confirm_resize")
    inst = found.instance
    ensure_action_allowed(
        gate,
        server_id=inst.uuid,
        vm_state=inst.vm_state,
        task_state=inst.task_state,
        launched=inst.launched_at is not None,
    )
    raise NotImplementedYet(f"The '{name}' server action is not supported yet.")


# resize, confirmResize and revertResize are served by openkeel.api.resources.migrate_server.
confirm_resize = resize_handlers.confirm_resize
revert_resize = resize_handlers.revert_resize
resize = resize_handlers.resize


def trigger_crash_dump(req: ApiRequest) -> None:
    """trigger_crash_dump."""
    _refuse(req, "trigger_crash_dump", "trigger_crash_dump", "trigger_crash_dump")
