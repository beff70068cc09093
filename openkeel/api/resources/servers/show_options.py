"""Policy- and microversion-derived view options of the servers handlers (one place)."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers.views_server import ShowOptions
from openkeel.api.usecases.servers.gathering import Wanted

POLICY = "os_compute_api:servers:%s"
EXTENDED_ATTRS = "os_compute_api:os-extended-server-attributes"


def _target(project_id: str | None) -> dict[str, str | None] | None:
    return {"project_id": project_id} if project_id is not None else None


def host_status_mode(req: ApiRequest, project_id: str | None) -> bool | None:
    """None: no host_status; False: any; True: only UNKNOWN (2.16 policies)."""
    if not req.at_least("2.16"):
        return None
    ctx = req.context
    target = _target(project_id)
    if ctx.can(POLICY % "show:host_status", target, fatal=False):
        return False
    if ctx.can(POLICY % "show:host_status:unknown-only", target, fatal=False):
        return True
    return None


def show_options(
    req: ApiRequest, project_id: str | None, *, full: bool = True, server_groups: bool = False
) -> ShowOptions:
    """Options of a detailed server body for a server of ``project_id`` (None: a list)."""
    ctx = req.context
    target = _target(project_id)
    extra_specs = req.at_least("2.47") and ctx.can(
        POLICY % "show:flavor-extra-specs", target, fatal=False
    )
    extended = full and ctx.can(EXTENDED_ATTRS, target, fatal=False)
    return ShowOptions(
        is_admin=ctx.is_admin,
        extra_specs=extra_specs,
        extended_attrs=extended,
        full=full,
        server_groups=server_groups,
    )


def wanted(req: ApiRequest, host_status: bool | None, server_groups: bool) -> Wanted:
    """Which facts the gatherer must load for these options."""
    return Wanted(
        volumes=True,
        server_groups=server_groups,
        placement=req.at_least("2.96"),
        host_status=host_status,
    )
