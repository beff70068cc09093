"""The compute API role on its own: ``openkeel api --config-file nova.conf``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import uvicorn

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import Authenticator
from openkeel.api.context import RequestContext
from openkeel.api.factory import build_api_app
from openkeel.api.http_protocol import NovaFaultHttpToolsProtocol
from openkeel.api.identity_discovery import WithIdentityDiscovery
from openkeel.api.services import ApiServices
from openkeel.api.usecases.external_events import create_events
from openkeel.clients.image import Caller
from openkeel.cmd import identity as embedded
from openkeel.cmd import logs, preflight, volume
from openkeel.cmd.metadata import with_metadata_api
from openkeel.conf.glance import locates_glance
from openkeel.db.network_store import NetworkStore
from openkeel.image_api.app import Identify, build_image_app
from openkeel.image_api.services import image_api_services
from openkeel.image_api.usecases.image_data import recover
from openkeel.network.embedded.service import Caller as NetworkCaller
from openkeel.network.embedded.service import NetworkService
from openkeel.network_api.app import Identify as NetworkIdentify
from openkeel.network_api.app import build_network_app
from openkeel.notifications.emitter import close as close_notifier
from openkeel.notifications.emitter import notifier_from_conf
from openkeel.runtime.observability import observed, start_metrics_server
from openkeel.runtime.shutdown import ShutdownSignals, SignalledServer

LOG = logging.getLogger(__name__)


def image_identity(authenticator: Authenticator) -> Identify:
    """Who calls the image API: the compute API's own authenticator (noauth or Keystone, one
    token cache for both APIs) turned into the image service's caller; Glance's default admin
    rule is the admin role."""

    def identify(headers: dict[str, str], request_id: str) -> Caller:
        context = authenticator.authenticate(headers, request_id)
        return Caller(context.project_id, "admin" in context.roles, context.auth_token)

    return identify


def with_image_api(app: ComputeApiApp, services: ApiServices) -> Any:
    """``app`` with the embedded image API under ``/image`` (decision 0034), unless a real
    Glance is configured; uploads cut off by the last stop are put back to queued first.

    For one process only (the all-in-one): image files are local to it, and the start-up
    recovery assumes no other process is uploading."""
    glance = services.conf.glance
    if locates_glance(glance):
        return app
    image_services = image_api_services(services.api_db, Path(services.conf.state_path))
    recover(image_services)
    return build_image_app(app, image_services, image_identity(app.authenticator))


def network_identity(authenticator: Authenticator) -> NetworkIdentify:
    """Who calls the network API: the compute API's authenticator turned into the network
    service's caller (Neutron's admin is the admin role)."""

    def identify(headers: dict[str, str], request_id: str) -> NetworkCaller:
        context = authenticator.authenticate(headers, request_id)
        return NetworkCaller(context.project_id, "admin" in context.roles)

    return identify


def network_service(
    api_db: sa.Engine, notify: Callable[[str, str, str], None] | None = None
) -> NetworkService:
    """The embedded network service over the API database (tables made when missing)."""
    store = NetworkStore(api_db)
    store.install()
    return NetworkService(store, notify)


def nova_notifier(compute: ComputeApiApp, services: ApiServices) -> Callable[[str, str, str], None]:
    """What Neutron's Nova notifier does: report a changed or deleted port of a server to the
    compute API's external events (the host then refreshes the server's network info). Never
    fails the network change it follows."""

    def notify(server_uuid: str, event: str, port_id: str) -> None:
        context = RequestContext(user_id="network", project_id=None, roles=("admin", "service"),
                                 enforcer=compute.enforcer)  # fmt: skip
        body = {"server_uuid": server_uuid, "name": event, "tag": port_id}
        try:
            create_events(services, context, [body])
        except Exception:
            LOG.exception("Reporting %s of port %s to compute failed", event, port_id)

    return notify


def with_network_api(app: Any, compute: ComputeApiApp, services: ApiServices) -> Any:
    """``app`` with the embedded network API under ``/networking`` (decision 0041); its port
    changes are reported to compute as Neutron reports them."""
    identify = network_identity(compute.authenticator)
    service = network_service(services.api_db, nova_notifier(compute, services))
    return build_network_app(app, service, identify)


def api_app(
    services: ApiServices, url: str, image_api: bool = False, metadata_api: bool = False
) -> Any:
    """The ASGI app of an API process reached at ``url``.

    With ``image_api`` (the all-in-one) the embedded image API is served under ``/image`` unless
    Glance is configured, and the embedded volume API under ``/volume``; with ``metadata_api``
    the metadata service is under ``/metadata`` (decision 0058). ``[api] auth_strategy = embedded`` serves the identity service under
    ``/identity`` and validates tokens with it; noauth2 serves identity version discovery (see
    identity_discovery).
    """
    conf = services.conf
    identity = None
    authenticator = None
    if conf.api.auth_strategy == "embedded":
        identity = embedded.identity_service(conf, services.api_db, image_api)
        authenticator = embedded.authenticator(conf, identity, url)
    compute: ComputeApiApp = build_api_app(services, authenticator)
    app: Any = compute
    if image_api:
        app = with_image_api(compute, services)
        if conf.openkeel_network.backend == "flat":
            app = with_network_api(app, compute, services)
        app = volume.with_volume_api(app, compute, services)
    if identity is not None:
        app = embedded.with_identity_api(app, identity)
    if conf.api.auth_strategy == "noauth2":
        app = WithIdentityDiscovery(app)
    if metadata_api:
        app = with_metadata_api(app, conf, services.api_db, services.cell_dbs)
    return observed(app, conf)


def api_server(
    services: ApiServices,
    host: str,
    port: int,
    image_api: bool = False,
    metadata_api: bool = False,
    *,
    signals: ShutdownSignals,
) -> SignalledServer:
    """The API as a uvicorn server (uvloop + httptools), built before anything is announced
    (see :func:`api_app`); the first of ``signals`` stops it, requests in progress get the
    time the work may take."""
    app = api_app(services, f"http://{host}:{port}", image_api, metadata_api)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        # httptools, with Nova's JSON fault for requests it cannot parse (an over-long URL).
        http=NovaFaultHttpToolsProtocol,
        lifespan="on",
        log_level="warning",
        # uvicorn's own lines go through the role's handler and format (openkeel.cmd.logs).
        log_config=None,
        access_log=False,
        # Clients poll every few seconds (osc --wait: 5 s); a keep-alive shorter than the poll
        # period races with their next request and resets it. Nova keeps sockets 900 s.
        timeout_keep_alive=75,
        timeout_graceful_shutdown=max(1, int(signals.work)),
    )
    return SignalledServer(config, signals)


def run(config_files: Sequence[str]) -> int:
    """Serve the API described by ``config_files`` (other roles reached over its transport).

    The configuration, the databases and the listening port are checked first; a failure is a
    ``preflight.StartupError`` (one line, exit 1).
    """
    from openkeel.api.usecases.images import glance_client
    from openkeel.cmd.roles import api_clients
    from openkeel.cmd.standalone import databases, placement_client
    from openkeel.rpc.transport import get_transport

    conf = preflight.load_config(config_files)
    logs.setup(conf, "openkeel-api")
    signals = ShutdownSignals.from_conf(conf).install()
    api_db, cell_dbs = databases(conf)
    host, port = conf.osapi_compute_listen, conf.osapi_compute_listen_port
    with preflight.listen(host, port) as sock, contextlib.ExitStack() as stack:
        with preflight.starting("start-up"):
            transport = get_transport(conf.transport_url, exchange=conf.control_exchange)
            stack.callback(transport.close)
            # Placement is optional for the API (a locally deleted server's allocations are
            # otherwise freed by its host's audit when it comes back).
            placement = placement_client(conf) if conf.placement.endpoint_override else None
            notifier = notifier_from_conf(conf).prepare("nova-api", conf.host)
            stack.callback(close_notifier, notifier)
            services = ApiServices(
                conf=conf, api_db=api_db, cell_dbs=cell_dbs, placement=placement,
                images=glance_client(conf.glance), **api_clients(transport),
                notifier=notifier,
            )  # fmt: skip
            server = api_server(services, host, port, signals=signals)
            start_metrics_server(conf)
        if not signals.requested.is_set():  # a signal during start-up: nothing to serve
            server.run(sockets=[sock])
    signals.finished()
    LOG.info("OpenKeel api stopped")
    return 0
