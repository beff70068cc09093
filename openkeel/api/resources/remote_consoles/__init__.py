"""Remote consoles: ``POST /servers/{server_id}/remote-consoles`` (2.6+) and the legacy
``os-getVNCConsole``, ``os-getSPICEConsole``, ``os-getSerialConsole`` actions (2.1-2.5)."""
