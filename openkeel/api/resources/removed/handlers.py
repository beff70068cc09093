"""Handler of the one removed API that does not answer 410: the ``os-getRDPConsole`` action.

Called by the route table of :mod:`openkeel.api.resources.removed.routes`. Nova flagged it
removed in 29.0.0 (Caracal) with the Hyper-V driver but kept its 2.1-2.5 window, so inside
that window every request gets a bare 400 (no server lookup, no policy), and 404 above it.
"""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.domain.errors import Invalid

# webob's default explanation for HTTPBadRequest, which Nova raises without one.
RDP_CONSOLE_MESSAGE = (
    "The server could not comply with the request since it is either malformed or otherwise "
    "incorrect."
)


def reject_rdp_console(req: ApiRequest) -> None:
    """``POST /servers/{id}/action {"os-getRDPConsole": ...}``: always 400."""
    raise Invalid(RDP_CONSOLE_MESSAGE)
