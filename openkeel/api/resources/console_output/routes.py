"""Route of ``os-getConsoleOutput`` on ``/servers/{id}/action``."""

from __future__ import annotations

from openkeel.api.resources.console_output import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"


def register(table: RouteTable) -> None:
    """Add ``os-getConsoleOutput`` to ``table``."""
    body = Versioned.of(("2.0", schemas.GET_CONSOLE_OUTPUT_V21))
    ep = endpoint(handlers.get_console_output, body=body, policy="os_compute_api:os-console-output")
    table.add_action(ACTION, "os-getConsoleOutput", ep)
