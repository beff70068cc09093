"""The console proxies: ``openkeel novncproxy`` and ``openkeel serialproxy`` (each its own
process, as Nova's nova-novncproxy and nova-serialproxy), and the same proxies started beside
the API by the all-in-one.

A proxy reads console tokens from the cell databases (found through the API DB's cell
mappings) and asks the server's compute host over RPC whether the console port still holds.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
import uvicorn
from oslo_config import cfg

from openkeel.cmd import logs, preflight
from openkeel.console_proxy.app import ConsoleProxyApp
from openkeel.console_proxy.authorization import ConsoleAuthorizer
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.virt.loading import console_opener

LOG = logging.getLogger(__name__)

# proxy -> (its [group], listen host option, listen port option)
PROXIES: dict[str, tuple[str, str, str]] = {
    "novncproxy": ("vnc", "novncproxy_host", "novncproxy_port"),
    "serialproxy": ("serial_console", "serialproxy_host", "serialproxy_port"),
}


def proxy_app(
    conf: cfg.ConfigOpts, kind: str, cell_dbs: Mapping[str, sa.Engine],
    compute: ComputeRpcClient | None,
) -> ConsoleProxyApp:  # fmt: skip
    """The ASGI app of proxy ``kind``; the noVNC proxy also serves ``[DEFAULT] web``."""
    web = Path(conf.web) if kind == "novncproxy" else None
    return ConsoleProxyApp(
        ConsoleAuthorizer(cell_dbs, compute), conf.console.allowed_origins, web,
        conf.consoleauth.enforce_session_timeout, opener=console_opener(conf),
    )  # fmt: skip


def proxy_server(app: ConsoleProxyApp) -> uvicorn.Server:
    """A uvicorn server for a proxy app (websockets from the ``websockets`` package)."""
    config = uvicorn.Config(
        app, loop="asyncio", ws="websockets-sansio", lifespan="off", log_level="warning",
        log_config=None, access_log=False,
        # noVNC keeps one websocket per console; pings keep idle consoles from being cut.
        ws_ping_interval=20.0,
    )  # fmt: skip
    return uvicorn.Server(config)


@dataclass
class RunningProxy:
    """A proxy served on a thread of its own (the all-in-one's)."""

    kind: str
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join()


def bind_or_any(host: str, port: int) -> socket.socket:
    """The all-in-one's proxy socket: the configured port, else (busy: another all-in-one or
    a real Nova proxy on this machine) a free one, which the console URLs then name."""
    try:
        return preflight.listen(host, port)
    except preflight.StartupError as exc:
        LOG.warning("%s; the console proxy takes a free port instead", exc)
        return preflight.listen(host, 0)


def start_in_thread(app: ConsoleProxyApp, kind: str, sock: socket.socket) -> RunningProxy:
    """Serve ``app`` on ``sock`` from a new thread."""
    server = proxy_server(app)
    host, port = sock.getsockname()[:2]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=kind,
                              daemon=True)  # fmt: skip
    thread.start()
    return RunningProxy(kind, f"http://{host}:{port}", server, thread)


def run(kind: str, config_files: Sequence[str]) -> int:
    """Serve proxy ``kind`` as configured by ``config_files`` until interrupted."""
    from openkeel.cmd.standalone import cell_engines
    from openkeel.rpc.transport import get_transport

    conf = preflight.load_config(config_files)
    logs.setup(conf, f"openkeel-{kind}")
    if not conf.api_database.connection:
        raise preflight.StartupError("[api_database] connection is required")
    api_db = preflight.connected_engine(conf.api_database.connection, "[api_database] connection")
    cell_dbs = cell_engines(api_db)
    group, host_opt, port_opt = PROXIES[kind]
    host, port = conf[group][host_opt], conf[group][port_opt]
    with preflight.listen(host, port) as sock, contextlib.ExitStack() as stack:
        with preflight.starting("start-up"):
            transport = get_transport(conf.transport_url, exchange=conf.control_exchange)
            stack.callback(transport.close)
            server = proxy_server(proxy_app(conf, kind, cell_dbs, ComputeRpcClient(transport)))
        server.run(sockets=[sock])
    return 0
