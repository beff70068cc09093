"""Remote console use cases: ``POST /servers/{id}/remote-consoles`` (2.6+), the legacy
``os-get*Console`` actions (2.1-2.5) and ``GET /os-console-auth-tokens/{token}``.

Called by the remote_consoles and console_auth_tokens resources. A console URL is made on the
server's compute host (an RPC call: it stores the console auth token in the cell DB); a token
is looked up in every cell but cell0, as Nova scatters it.
"""

from __future__ import annotations

import time

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.console_output import InstanceNotReady
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import find_allowed, find_server
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import reader
from openkeel.db.repositories import console_auth_tokens as tokens
from openkeel.domain.errors import Invalid, NotFound, ServiceUnavailable
from openkeel.domain.instances import Instance
from openkeel.domain.states import ensure_action_allowed
from openkeel.rpc.messages import compute as m

POLICY = "os_compute_api:os-remote-consoles"
TOKENS_POLICY = "os_compute_api:os-console-auth-tokens"

MESSAGES: dict[str, type[m.GetRemoteConsole]] = {
    "vnc": m.GetVncConsole,
    "spice": m.GetSpiceConsole,
    "serial": m.GetSerialConsole,
    "mks": m.GetMksConsole,
}


def legacy_console(
    services: ApiServices, context: RequestContext, server_id: str, protocol: str,
    console_type: str | None,
) -> str:  # fmt: skip
    """The URL of an ``os-get*Console`` action: Nova checks the rule on the caller's own
    project before it looks the server up."""
    context.can(POLICY)
    inst = find_server(services, context, server_id).instance
    return _console_url(services, context, inst, protocol, console_type)


def remote_console(
    services: ApiServices, context: RequestContext, server_id: str, protocol: str,
    console_type: str,
) -> str:  # fmt: skip
    """The URL of ``POST /servers/{id}/remote-consoles`` (rdp: removed with Hyper-V)."""
    inst = find_allowed(services, context, server_id, POLICY).instance
    if protocol == "rdp":
        raise Invalid(f"Unavailable console type {protocol}.")
    return _console_url(services, context, inst, protocol, console_type)


def _console_url(
    services: ApiServices, context: RequestContext, inst: Instance, protocol: str,
    console_type: str | None,
) -> str:  # fmt: skip
    if not inst.host:
        raise InstanceNotReady(inst.uuid)
    ensure_action_allowed(
        f"get_{protocol}_console", server_id=inst.uuid, vm_state=inst.vm_state,
        task_state=inst.task_state, launched=inst.launched_at is not None,
    )  # fmt: skip
    if services.compute is None:
        raise ServiceUnavailable("No compute service can be reached from this API process.")
    message = MESSAGES[protocol](inst.uuid, console_type=console_type)
    return str(services.compute.call(call_context(context), inst.host, message))


def find_token(services: ApiServices, token: str, now: int) -> tokens.ConsoleAuthorization:
    """The unexpired authorization of ``token`` in whichever cell holds it."""
    for cell_uuid, engine in services.cell_dbs.items():
        if cell_uuid == CELL0_UUID:
            continue
        with reader(engine).connect() as conn:
            found = tokens.validate(conn, token, now)
        if found is not None:
            return found
    raise NotFound("Token not found")


def show_token(
    services: ApiServices, context: RequestContext, token: str
) -> tokens.ConsoleAuthorization:
    """``GET /os-console-auth-tokens/{token}`` (admin): the console a token opens."""
    context.can(TOKENS_POLICY)
    if not token:
        raise Invalid("token not provided")
    return find_token(services, token, int(time.time()))
