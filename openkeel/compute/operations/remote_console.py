"""Remote consoles on the compute host (Nova's get_vnc_console, get_spice_console,
get_serial_console, get_mks_console and validate_console_port).

Called by the compute endpoint. Asks the driver where the guest's console listens, stores a
console auth token for it (hashed, ``[consoleauth] token_ttl``) in the cell DB and answers the
access URL the user opens: the proxy base URL with the token in its query. Errors are the
domain's so they cross RPC as themselves: a console type switched off is a 400 "Unavailable
console type", a wrong type for the protocol a 400 "Invalid console type", a driver without the
console a 501, a guest that is gone a 404 (a 409 while it is still building).
"""

from __future__ import annotations

import calendar
import logging
from urllib.parse import parse_qs, urlencode, urlsplit

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.db.repositories import console_auth_tokens as tokens
from openkeel.domain.errors import Conflict, Invalid, NotFound, NotImplementedYet
from openkeel.domain.states import VmState
from openkeel.virt.errors import InstanceNotFound as GuestNotFound
from openkeel.virt.errors import NotSupported
from openkeel.virt.model import ConsoleInfo

LOG = logging.getLogger(__name__)

NOT_SUPPORTED = "The requested functionality is not supported."

# protocol -> (the [group] that switches it on, its access URL option, the types it serves)
PROTOCOLS: dict[str, tuple[str, str, frozenset[str] | None]] = {
    "vnc": ("vnc", "novncproxy_base_url", frozenset({"novnc"})),
    "spice": ("spice", "html5proxy_base_url", frozenset({"spice-html5", "spice-direct"})),
    # Nova's serial console takes any type the API let through.
    "serial": ("serial_console", "base_url", None),
    "mks": ("mks", "mksproxy_base_url", frozenset({"webmks"})),
}


def access_url(base: str, console_type: str, token: str) -> str:
    """The URL the user opens: noVNC's page carries the token inside its ``path`` parameter
    (the websocket path noVNC connects to), every other console in the query itself."""
    if console_type != "novnc":
        return f"{base}?token={token}"
    parts = urlsplit(base)
    query = parse_qs(parts.query)
    query["path"] = [f"{query.get('path', [''])[0]}?token={token}"]
    return parts._replace(query=urlencode(query, doseq=True)).geturl()


def _driver_console(host: ComputeHost, uuid: str, protocol: str) -> ConsoleInfo:
    instance = host.records.get(uuid)
    ref = guest.instance_ref(host.conf, instance)
    try:
        if protocol == "vnc":
            return host.driver.get_vnc_console(ref)
        if protocol == "serial":
            return host.driver.get_serial_console(ref)
        raise NotSupported(f"get_{protocol}_console", host.driver.name)
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc
    except GuestNotFound as exc:
        if instance.vm_state == VmState.BUILDING:
            raise Conflict(f"Instance {uuid} is not ready") from exc
        raise NotFound(f"Instance {uuid} could not be found.") from exc


def get_console(host: ComputeHost, uuid: str, protocol: str, console_type: str | None) -> str:
    """A new console auth token for the guest's ``protocol`` console; its access URL."""
    group, url_option, types = PROTOCOLS[protocol]
    opts = host.conf[group]
    if not opts.enabled:
        raise Invalid(f"Unavailable console type {console_type}.")
    if types is not None and console_type not in types:
        raise Invalid(f"Invalid console type {console_type}")
    info = _driver_console(host, uuid, protocol)
    base = str(opts[url_option])
    if console_type == "spice-direct":
        base = str(opts.spice_direct_proxy_base_url)
    target = tokens.ConsoleTarget(
        str(console_type), info.host, info.port, uuid, info.internal_access_path,
        access_url_base=base,
    )  # fmt: skip
    now = _now(host)
    with host.records.db.begin() as conn:
        tokens.delete_expired(conn, now)
        token = tokens.authorize(conn, target, now + host.conf.consoleauth.token_ttl)
    return access_url(base, str(console_type), token)


def _now(host: ComputeHost) -> int:
    return calendar.timegm(host.clock.now().timetuple())


def cleanup_expired_console_auth_tokens(host: ComputeHost) -> int:
    """Nova's ``_cleanup_expired_console_auth_tokens`` periodic task: remove every token of
    this cell that has expired (a token nobody asks for again would otherwise stay until the
    next console request or the server's delete); how many."""
    with host.records.db.begin() as conn:
        removed = tokens.delete_expired(conn, _now(host))
    if removed:
        LOG.debug("Removed %d expired console auth tokens", removed)
    return removed


def validate_console_port(host: ComputeHost, uuid: str, port: int, console_type: str) -> bool:
    """Whether the guest's console of ``console_type`` still listens on ``port`` (a token
    outliving a move or a restart of the guest must not open another guest's console)."""
    protocol = "serial" if console_type == "serial" else "vnc"
    try:
        return _driver_console(host, uuid, protocol).port == port
    except (NotFound, Conflict):
        return False
