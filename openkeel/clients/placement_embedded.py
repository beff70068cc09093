"""The real Placement service (``openstack-placement``) run in this process on SQLite.

Used by the all-in-one (scheduler and compute roles share it) and by tests. Requests go
through ``httpx.WSGITransport`` straight into Placement's WSGI app: no socket, no port.
:meth:`EmbeddedPlacement.serve_http` also offers it on a loopback port for other processes.

Placement keeps process-wide state (its enginefacade, policy enforcer, trait sync flags),
so only one embedded Placement may run per process at a time. Its options live in a
``ConfigOpts`` of its own, never in openkeel's.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from socketserver import ThreadingMixIn
from types import TracebackType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
import jsonschema
from oslo_config import cfg
from oslo_db.sqlalchemy import engines

from openkeel.clients.placement import PlacementClient

LOG = logging.getLogger(__name__)
DB_FILE = "placement.sqlite"
BASE_URL = "http://placement.embedded"
_ACTIVE_LOCK = threading.Lock()
_active: EmbeddedPlacement | None = None


def _serialized(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """Run one request at a time: SQLite has a single writer, and Placement's read-then-write
    transactions would otherwise fail with "database is locked" instead of waiting."""
    lock = threading.Lock()

    def serialized_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with lock:
            result = app(environ, start_response)
            try:
                return list(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()

    return serialized_app


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Placement logs each request itself."""


class _CachedJsonschema:
    """Stands in for the ``jsonschema`` module inside ``placement.util``.

    Placement validates every request body and query with ``jsonschema.validate``, which checks
    the schema and builds a validator each time (~6 ms of a boot's CPU per call). Its schemas are
    module constants, so one validator per schema gives the same answers (same validator class,
    same best-match error) for a fraction of the cost. Only the embedded Placement is patched.
    """

    def __init__(self) -> None:
        self._validators: dict[tuple[int, type], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(jsonschema, name)

    def validate(self, instance: Any, schema: Any, *args: Any, **kwargs: Any) -> None:
        checker = kwargs.get("format_checker")
        key = (id(schema), type(checker))
        validator = self._validators.get(key)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = cls(schema, format_checker=checker)
            self._validators[key] = validator
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error


def _cache_placement_validators() -> None:
    from placement import util

    if not isinstance(util.jsonschema, _CachedJsonschema):
        util.jsonschema = _CachedJsonschema()


def _drop_consumers_without_allocations(engine: Any) -> None:
    """Remove consumers a killed process left without allocations.

    Placement creates a new consumer in one transaction and writes its allocations in the
    next, removing the consumer only when that write raises; a process killed in between
    leaves it (generation 0). ``GET /allocations`` does not show it, so every later write for
    that uuid sends generation None and is refused. Called before this process serves any
    request, when nothing else writes to the file.
    """
    statement = (
        "DELETE FROM consumers WHERE NOT EXISTS "
        "(SELECT 1 FROM allocations WHERE allocations.consumer_id = consumers.uuid)"
    )
    with engine.begin() as conn:
        dropped = conn.exec_driver_sql(statement).rowcount
    if dropped:
        LOG.warning("Dropped %s Placement consumers left without allocations", dropped)


class EmbeddedPlacement:
    """Placement on ``<data_dir>/placement.sqlite``; ``start()`` creates/migrates the DB."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._app: Any = None
        self._undo_engine: Any = None
        self._engine: Any = None
        self._server: _ThreadingServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.data_dir / DB_FILE}"

    def start(self) -> EmbeddedPlacement:
        global _active
        with _ACTIVE_LOCK:
            if _active is not None:
                raise RuntimeError("an embedded Placement already runs in this process")
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._app = self._load_app()
            _active = self
        return self

    def _load_app(self) -> Any:
        with warnings.catch_warnings():  # webob imports the deprecated cgi module
            warnings.filterwarnings("ignore", category=DeprecationWarning, module="webob.*")
            from placement import conf as placement_conf
            from placement import db_api, deploy, policy
            from placement.objects import resource_class, trait

        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        conf.set_override("auth_strategy", "noauth2", group="api")
        conf.set_override("connection", self.database_url, group="placement_database")
        conf.set_override("sync_on_startup", True, group="placement_database")
        conf([], project="placement", default_config_files=[], default_config_dirs=[])
        if not db_api.configure.called:  # process-wide; each instance patches its own engine
            db_api.configure(conf)
        self._engine = engines.create_engine(self.database_url)
        self._undo_engine = db_api.placement_context_manager.patch_engine(self._engine)
        policy.reset()
        trait._TRAITS_SYNCED = False
        resource_class._RESOURCE_CLASSES_SYNCED = False
        _cache_placement_validators()
        # loadapp runs Placement's migrations and syncs standard traits and resource classes
        app = _serialized(deploy.loadapp(conf))
        _drop_consumers_without_allocations(self._engine)
        return app

    def stop(self) -> None:
        global _active
        with _ACTIVE_LOCK:
            if _active is not self:
                return
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
                self._server = None
            from placement import policy

            policy.reset()
            self._undo_engine()
            self._engine.dispose()
            self._app = None
            _active = None

    def __enter__(self) -> EmbeddedPlacement:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def client(self, **kwargs: Any) -> PlacementClient:
        """A client bound to this Placement in-process (as an admin through noauth2)."""
        if self._app is None:
            raise RuntimeError("embedded Placement is not started")
        http = httpx.Client(
            transport=httpx.WSGITransport(app=self._app),
            base_url=BASE_URL,
            headers={"X-Auth-Token": "admin"},
        )
        return PlacementClient(http, **kwargs)

    def serve_http(self, host: str = "127.0.0.1") -> str:
        """Serve on a free loopback port (threaded); returns the endpoint URL."""
        if self._app is None:
            raise RuntimeError("embedded Placement is not started")
        if self._server is None:
            self._server = make_server(
                host, 0, self._app, server_class=_ThreadingServer, handler_class=_QuietHandler
            )
            self._thread = threading.Thread(
                target=self._server.serve_forever, name="placement-http", daemon=True
            )
            self._thread.start()
        return f"http://{host}:{self._server.server_port}"
