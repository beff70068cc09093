"""Console output use case (``os-getConsoleOutput``): the guest's console log from its compute
host, cut to the requested number of lines, control characters removed as Nova does.

Called by the console_output resource. A server with no host yet is a 409 ("not ready"); the
compute host answers over RPC (a call), its NotFound/501 arrive as themselves.
"""

from __future__ import annotations

import re

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import find_allowed
from openkeel.domain.errors import Conflict, ServiceUnavailable
from openkeel.rpc.messages.compute import GetConsoleOutput

POLICY = "os_compute_api:os-console-output"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f]")


class InstanceNotReady(Conflict):
    def __init__(self, instance_id: str) -> None:
        super().__init__(f"Instance {instance_id} is not ready")


def console_output(
    services: ApiServices, context: RequestContext, server_id: str, length: int | None
) -> str:
    """The console log of a server the caller may see (``length``: last lines, None: all)."""
    inst = find_allowed(services, context, server_id, POLICY).instance
    if not inst.host:
        raise InstanceNotReady(inst.uuid)
    if services.compute is None:
        raise ServiceUnavailable("No compute service can be reached from this API process.")
    message = GetConsoleOutput(inst.uuid, tail_length=length)
    output = services.compute.call(call_context(context), inst.host, message)
    return _CONTROL.sub("", str(output))
