"""The compute API role on its own: ``openkeel api --config-file nova.conf``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import uvicorn

from openkeel.api.factory import build_api_app
from openkeel.api.identity_discovery import WithIdentityDiscovery
from openkeel.api.services import ApiServices
from openkeel.conf import make_config
from openkeel.db.engine import make_engine


def serve(services: ApiServices, host: str, port: int) -> None:
    """Run the API with uvicorn (uvloop + httptools) until interrupted.

    Without Keystone, identity version discovery is served too (see identity_discovery).
    """
    app: Any = build_api_app(services)
    if services.conf.api.auth_strategy == "noauth2":
        app = WithIdentityDiscovery(app)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        log_level="warning",
        access_log=False,
        # Clients poll every few seconds (osc --wait: 5 s); a keep-alive shorter than the poll
        # period races with their next request and resets it. Nova keeps sockets 900 s.
        timeout_keep_alive=75,
    )
    uvicorn.Server(config).run()


def run(config_files: Sequence[str]) -> int:
    """Serve the API described by ``config_files`` (other roles reached over its transport)."""
    from openkeel.cmd.roles import api_clients
    from openkeel.cmd.standalone import cell_engines
    from openkeel.rpc.transport import get_transport

    conf = make_config(config_files=config_files)
    if not conf.api_database.connection:
        raise SystemExit("[api_database] connection is required")
    api_db = make_engine(conf.api_database.connection)
    transport = get_transport(conf.transport_url, exchange=conf.control_exchange)
    services = ApiServices(
        conf=conf, api_db=api_db, cell_dbs=cell_engines(api_db), **api_clients(transport)
    )
    serve(services, conf.osapi_compute_listen, conf.osapi_compute_listen_port)
    transport.close()
    return 0
