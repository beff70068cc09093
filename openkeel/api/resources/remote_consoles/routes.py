"""Routes of the remote consoles: one path from 2.6, three body actions up to 2.5."""

from __future__ import annotations

from openkeel.api.resources.remote_consoles import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.remote_consoles import POLICY
from openkeel.api.validation import Versioned

PATH = "/servers/{server_id}/remote-consoles"
ACTION = "/servers/{id}/action"

CREATE = Versioned.of(
    ("2.6", schemas.CREATE_V26), ("2.8", schemas.CREATE_V28), ("2.99", schemas.CREATE_V299)
)
LEGACY = {
    "os-getVNCConsole": schemas.GET_VNC_CONSOLE,
    "os-getSPICEConsole": schemas.GET_SPICE_CONSOLE,
    "os-getSerialConsole": schemas.GET_SERIAL_CONSOLE,
}


def register(table: RouteTable) -> None:
    """Add the remote console routes to ``table``."""
    table.add("POST", PATH, endpoint(handlers.create_remote_console, since="2.6", body=CREATE,
                                     policy=POLICY))  # fmt: skip
    for key, schema in LEGACY.items():
        ep = endpoint(handlers.get_legacy_console, until="2.5", body=Versioned.of(("2.0", schema)),
                      policy=POLICY)  # fmt: skip
        table.add_action(ACTION, key, ep)
