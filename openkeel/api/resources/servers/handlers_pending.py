"""Server actions registered with the servers resource: trigger_crash_dump (its operation is
the guest requests use case's) and the resize family (served by migrate_server)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.resources.migrate_server import handlers as resize_handlers
from openkeel.api.usecases.guest_requests import GuestRequests
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
    """trigger_crash_dump (2.17; policy target: the server's project and user)."""
    requests = GuestRequests(req.services, req.context)
    found = requests.find(req.params["id"])
    requests.authorize("os_compute_api:servers:trigger_crash_dump", found, with_user=True)
    requests.trigger_crash_dump(found)
