"""The metadata API role on its own: ``openkeel metadata --config-file nova.conf``.

Listens on ``[DEFAULT] metadata_listen``:``metadata_listen_port`` (8775, Nova's port), reads
servers from the cell databases mapped in ``[api_database]`` (or only ``[database]`` with
``[api] local_metadata_per_cell``). The all-in-one serves the same app under ``/metadata``
(:func:`with_metadata_api`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
import uvicorn
from oslo_config import cfg

from openkeel.cmd import logs, preflight
from openkeel.metadata.app import build_metadata_app
from openkeel.metadata.records import GuestRecords
from openkeel.runtime.observability import observed, start_metrics_server
from openkeel.runtime.shutdown import ShutdownSignals, SignalledServer

PREFIX = "/metadata"


def guest_records(
    conf: cfg.ConfigOpts, api_db: sa.Engine, cell_dbs: Mapping[str, sa.Engine]
) -> GuestRecords:
    """The metadata service's reader of servers (one cell with local_metadata_per_cell: the
    cell whose database is ``[database] connection``)."""
    local = None
    if conf.api.local_metadata_per_cell:
        wanted = conf.database.connection
        local = next((u for u, e in cell_dbs.items() if str(e.url) == wanted), None)
        if local is None:
            raise preflight.StartupError(
                "[api] local_metadata_per_cell: [database] connection is no mapped cell"
            )
    return GuestRecords(api_db, cell_dbs, conf.api.dhcp_domain, local)


def with_metadata_api(
    app: Any, conf: cfg.ConfigOpts, api_db: sa.Engine, cell_dbs: Mapping[str, sa.Engine]
) -> Any:
    """``app`` with the metadata service under ``/metadata`` (the all-in-one)."""
    return build_metadata_app(conf, guest_records(conf, api_db, cell_dbs), app, PREFIX)


def run(config_files: Sequence[str]) -> int:
    """Serve the metadata API described by ``config_files`` until SIGTERM or SIGINT (then
    the requests in progress are answered and the exit status is 0)."""
    from openkeel.cmd.standalone import databases

    conf = preflight.load_config(config_files)
    logs.setup(conf, "openkeel-metadata")
    signals = ShutdownSignals.from_conf(conf).install()
    api_db, cell_dbs = databases(conf)
    host, port = conf.metadata_listen, conf.metadata_listen_port
    with preflight.listen(host, port) as sock, contextlib.ExitStack():
        with preflight.starting("start-up"):
            app = observed(
                build_metadata_app(conf, guest_records(conf, api_db, cell_dbs)), conf, "metadata"
            )
            start_metrics_server(conf)
            config = uvicorn.Config(app, host=host, port=port, loop="uvloop", lifespan="on",
                                    log_level="warning", log_config=None, access_log=False,
                                    timeout_graceful_shutdown=max(1, int(signals.work)))  # fmt: skip
            server = SignalledServer(config, signals)
        if not signals.requested.is_set():  # a signal during start-up: nothing to serve
            server.run(sockets=[sock])
    signals.finished()
    return 0
