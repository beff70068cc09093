"""The console proxies: ``openkeel novncproxy`` and ``openkeel serialproxy`` (each its own
process, as Nova's nova-novncproxy and nova-serialproxy), and the same proxies started beside
the API by the all-in-one.

SIGTERM (or SIGINT) stops a proxy process gracefully (decision 0066): no new connections, the
open console sessions go on for up to the work's time, then are closed; exit 0.

A proxy reads console tokens from the cell databases (found through the API DB's cell
mappings) and asks the server's compute host over RPC whether the console port still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
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
from openkeel.runtime.shutdown import ShutdownSignals, SignalledServer
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


@dataclass(frozen=True)
class Tls:
    """The proxies' TLS settings (Nova's ``[DEFAULT] cert``/``key``, ``[console] ssl_*``)."""

    cert: str
    key: str | None = None
    ciphers: str | None = None
    minimum_version: str = "default"

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        if self.ciphers:
            context.set_ciphers(self.ciphers)
        if self.minimum_version != "default":
            context.minimum_version = _TLS_VERSIONS[self.minimum_version]
        return context


_TLS_VERSIONS = {
    "tlsv1_1": ssl.TLSVersion.TLSv1_1,
    "tlsv1_2": ssl.TLSVersion.TLSv1_2,
    "tlsv1_3": ssl.TLSVersion.TLSv1_3,
}


def tls_settings(conf: cfg.ConfigOpts) -> Tls | None:
    """TLS when ``[DEFAULT] ssl_only`` (a start-up error without a readable certificate)."""
    if not conf.ssl_only:
        return None
    tls = Tls(conf.cert, conf.key, conf.console.ssl_ciphers, conf.console.ssl_minimum_version)
    try:
        tls.context()
    except (OSError, ssl.SSLError) as exc:
        raise preflight.StartupError(
            f"[DEFAULT] ssl_only is set but the certificate {conf.cert!r}"
            f"{f' with the key {conf.key!r}' if conf.key else ''} cannot be loaded: {exc}"
        ) from exc
    return tls


class _TlsConfig(uvicorn.Config):
    """uvicorn's config with the proxies' own SSL context (ciphers, minimum version)."""

    def __init__(self, app: ConsoleProxyApp, tls: Tls, **kwargs: object) -> None:
        super().__init__(app, ssl_certfile=tls.cert, ssl_keyfile=tls.key, **kwargs)  # type: ignore[arg-type]
        self._tls = tls

    def load(self) -> None:
        super().load()
        self.ssl = self._tls.context()


class DrainingProxyServer(SignalledServer):
    """A proxy's server stopped by the process's signals: it stops accepting at once, lets the
    open console sessions go on until they end or the work's time (``manager_shutdown_timeout``
    within ``graceful_shutdown_timeout``) passes, then closes those left (websocket close 1012,
    "service restart", as uvicorn does) and returns. uvicorn alone would close every session
    at the signal."""

    def __init__(self, config: uvicorn.Config, signals: ShutdownSignals) -> None:
        super().__init__(config, signals)
        self._signals = signals

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.stop_accepting(sockets)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._signals.work_left()
        if self.server_state.connections:
            LOG.info("Waiting up to %.0f s for %d console session(s) to end",
                     self._signals.work_left(), len(self.server_state.connections))  # fmt: skip
        while self.server_state.connections and loop.time() < deadline and not self.force_exit:
            await asyncio.sleep(0.1)  # uvicorn's own drain polls the same way
        if self.server_state.connections:
            LOG.info("Closing %d console session(s) still open", len(self.server_state.connections))  # fmt: skip
        await super().shutdown(sockets=None)


def proxy_server(
    app: ConsoleProxyApp, tls: Tls | None = None, signals: ShutdownSignals | None = None
) -> uvicorn.Server:
    """A uvicorn server for a proxy app (websockets from the ``websockets`` package); with
    ``signals``, one that drains its sessions when they stop the process."""
    options: dict[str, object] = dict(
        loop="asyncio", ws="websockets-sansio", lifespan="off", log_level="warning",
        log_config=None, access_log=False,
        # noVNC keeps one websocket per console; pings keep idle consoles from being cut.
        ws_ping_interval=20.0,
        # after the sessions' drain: how long their relays get to end once closed
        timeout_graceful_shutdown=5,
    )  # fmt: skip
    config = uvicorn.Config(app, **options) if tls is None else _TlsConfig(app, tls, **options)  # type: ignore[arg-type]
    return uvicorn.Server(config) if signals is None else DrainingProxyServer(config, signals)


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


def start_in_thread(
    app: ConsoleProxyApp, kind: str, sock: socket.socket, tls: Tls | None = None
) -> RunningProxy:
    """Serve ``app`` on ``sock`` from a new thread."""
    server = proxy_server(app, tls)
    host, port = sock.getsockname()[:2]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=kind,
                              daemon=True)  # fmt: skip
    thread.start()
    scheme = "http" if tls is None else "https"
    return RunningProxy(kind, f"{scheme}://{host}:{port}", server, thread)


def run(kind: str, config_files: Sequence[str]) -> int:
    """Serve proxy ``kind`` as configured by ``config_files`` until interrupted."""
    from openkeel.cmd.standalone import cell_engines
    from openkeel.rpc.transport import get_transport

    conf = preflight.load_config(config_files)
    logs.setup(conf, f"openkeel-{kind}")
    signals = ShutdownSignals.from_conf(conf).install()
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
            app = proxy_app(conf, kind, cell_dbs, ComputeRpcClient(transport))
            server = proxy_server(app, tls_settings(conf), signals)
        if not signals.requested.is_set():  # a signal during start-up: nothing to serve
            server.run(sockets=[sock])
    signals.finished()
    LOG.info("OpenKeel %s stopped", kind)
    return 0
