"""Guest access on the compute host: the console log (Nova's get_console_output).

Called by the compute endpoint for ``os-getConsoleOutput``. Errors are the domain's, so they
cross RPC as themselves: no guest here is a 404 (Nova's ConsoleNotAvailable), a driver without
the feature a 501.
"""

from __future__ import annotations

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.domain.errors import NotFound, NotImplementedYet
from openkeel.virt.errors import InstanceNotFound as GuestNotFound
from openkeel.virt.errors import NotSupported

NOT_SUPPORTED = "The requested functionality is not supported."


def console_output(host: ComputeHost, uuid: str, tail_length: int | None) -> str:
    """The console log as ASCII (undecodable bytes replaced), its last ``tail_length`` lines
    when given (0: nothing), as Nova's compute manager cuts it."""
    instance = host.records.get(uuid)
    try:
        output = host.driver.get_console_output(guest.instance_ref(host.conf, instance))
    except GuestNotFound as exc:
        raise NotFound("Guest does not have a console available.") from exc
    except NotSupported as exc:
        raise NotImplementedYet(NOT_SUPPORTED) from exc
    data = output.encode("latin-1", "replace")
    if tail_length is not None:
        data = b"" if tail_length == 0 else b"\n".join(data.split(b"\n")[-tail_length:])
    return data.decode("ascii", "replace")
