"""Server diagnostics use case (GET /servers/{id}/diagnostics): the guest's diagnostics from its
compute host, the driver's own mapping before 2.48 and Nova's standard document from 2.48.

Called by the server_diagnostics resource. Admin-only by default; a server without a host is a
409 ("not ready"); a guest that is not running is the host's 409, a driver without the feature
its 501 (both cross RPC as themselves).
"""

from __future__ import annotations

from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.console_output import InstanceNotReady
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import find_allowed
from openkeel.domain.errors import ServiceUnavailable
from openkeel.rpc.messages.compute import GetDiagnostics, GetInstanceDiagnostics

POLICY = "os_compute_api:os-server-diagnostics"


def diagnostics(
    services: ApiServices, context: RequestContext, server_id: str, standard: bool
) -> dict[str, Any]:
    """The diagnostics of a server the caller may see and is allowed them on."""
    inst = find_allowed(services, context, server_id, POLICY).instance
    if not inst.host:
        raise InstanceNotReady(inst.uuid)
    if services.compute is None:
        raise ServiceUnavailable("No compute service can be reached from this API process.")
    message = GetInstanceDiagnostics(inst.uuid) if standard else GetDiagnostics(inst.uuid)
    found = services.compute.call(call_context(context), inst.host, message)
    return dict(found) if isinstance(found, dict) else {}
