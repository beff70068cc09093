"""``openkeel all-in-one``: the whole cloud in one process on the embedded default.

SQLite databases in the data directory, noauth, the API on the given port. Bootstraps the
databases (API DB, cell0, cell1) and a few standard flavors on first start, writes a
``clouds.yaml`` entry for the ``openstack`` CLI, and prints where everything listens.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import glance_client
from openkeel.clients.image import ImageService
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd import identity, logs, preflight
from openkeel.cmd.api import api_server, network_service
from openkeel.cmd.bootstrap import bootstrap_embedded
from openkeel.cmd.console_proxy import (
    PROXIES,
    RunningProxy,
    bind_or_any,
    proxy_app,
    start_in_thread,
    tls_settings,
)
from openkeel.cmd.roles import (
    RoleSet,
    api_clients,
    follow_nodes,
    node_name,
    start_compute,
    start_conductor,
    start_scheduler,
)
from openkeel.compute.service import ComputeService
from openkeel.conf.glance import locates_glance
from openkeel.db.cells import CELL0_UUID
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.image_api.services import image_files
from openkeel.notifications.emitter import close as close_notifier
from openkeel.notifications.emitter import notifier_from_conf
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.transport import get_transport
from openkeel.runtime.shutdown import ShutdownSignals
from openkeel.virt.loading import KUBEVIRT, compute_hosts, load_driver

LOG = logging.getLogger(__name__)

# Simulated compute hosts of an all-in-one: two, so resize, migration, live migration,
# anti-affinity and evacuation work out of the box.
DEFAULT_HOSTS = 2


def clouds_yaml(root_url: str, password: str) -> str:
    """The ``clouds.yaml`` entry for this cloud with the embedded identity service: the admin
    user in the admin project, every endpoint from the service catalog."""
    return (
        "clouds:\n"
        "  openkeel:\n"
        "    auth_type: password\n"
        "    auth:\n"
        f"      auth_url: {root_url}/identity\n"
        "      username: admin\n"
        f"      password: {password}\n"
        "      project_name: admin\n"
        "      user_domain_name: Default\n"
        "      project_domain_name: Default\n"
        "    identity_api_version: 3\n"
        "    region_name: RegionOne\n"
    )


def noauth_clouds_yaml(
    url: str, identity: str, image: str | None = None, network: str | None = None
) -> str:
    """The ``clouds.yaml`` entry when ``[api] auth_strategy = noauth2`` (the token ``notused``
    is admin); image calls go to the embedded image API, not to Nova's ``/v2.1/images``
    proxy, network calls to the embedded network API and volume calls to the embedded
    volume API (always served, beside Nova's under ``/volume``)."""
    image_line = f"    image_endpoint_override: {image}\n" if image else ""
    image_line += f"    network_endpoint_override: {network}\n" if network else ""
    return (
        "clouds:\n"
        "  openkeel:\n"
        "    auth_type: none\n"
        "    auth:\n"
        f"      endpoint: {url}\n"
        f"    compute_endpoint_override: {url}\n"
        "    identity_api_version: 3\n"
        f"    identity_endpoint_override: {identity}\n"
        f"    block_storage_endpoint_override: {url.rsplit('/v2.1', 1)[0]}/volume/v3\n"
        "    volume_api_version: 3\n"
        f"{image_line}"
        "    region_name: RegionOne\n"
    )


def start_roles(
    conf: cfg.ConfigOpts,
    root: Path,
    api_db: sa.Engine,
    cell_dbs: dict[str, sa.Engine],
    hosts: int = 1,
) -> tuple[RoleSet, EmbeddedPlacement]:
    """Placement, then scheduler, conductor and the compute hosts (``hosts`` simulated ones,
    or one per Kubernetes node), on the in-process bus."""
    placement = EmbeddedPlacement(root).start()
    client = placement.client()
    transport = get_transport("inproc://all-in-one")
    roles = RoleSet(transport)
    try:
        roles.scheduler = start_scheduler(conf, transport, client, api_db, cell_dbs)
        roles.conductor = start_conductor(conf, transport, client, api_db, cell_dbs)
        cell1 = next((u, e) for u, e in cell_dbs.items() if u != CELL0_UUID)

        def start_host(compute_host: str) -> ComputeService:
            driver = load_driver(conf, node_name(cell1[1], compute_host))
            return start_compute(conf, transport, client, api_db, cell1, driver, compute_host)

        for compute_host in compute_hosts(conf, hosts):
            roles.computes.append(start_host(compute_host))
        follow_nodes(conf, roles, start_host)
    except BaseException:
        roles.stop()
        placement.stop()
        raise
    return roles, placement


def run(
    data_dir: str,
    host: str,
    port: int,
    config_files: Sequence[str],
    kubeconfig: str | None = None,
    hosts: int = DEFAULT_HOSTS,
) -> int:
    """Check, bootstrap, start every role, then announce and serve until SIGTERM or SIGINT:
    then the API answers the requests in progress, the roles finish their work in hand
    (runtime.shutdown) and the exit status is 0 (1 when the timeout cut work off).

    Nothing is announced before the data directory is writable and locked (one all-in-one per
    directory), the configuration and kubeconfig load, the port is bound and every role has
    started; any of these failing is a ``preflight.StartupError`` (one line, exit 1).
    """
    root = Path(data_dir).resolve()
    preflight.prepare_data_dir(root)
    with preflight.DataDirLock(root), contextlib.ExitStack() as stack:
        conf = preflight.load_config(
            config_files, overrides=_overrides(root, kubeconfig), defaults=_defaults(root)
        )
        logs.setup(conf, "openkeel-all-in-one")
        signals = ShutdownSignals.from_conf(conf).install()
        stopped: list[bool] = []  # whether the roles' work in hand all finished
        if conf.compute_driver == KUBEVIRT:  # --kubeconfig, or set in a --config-file
            preflight.check_kubeconfig(
                conf.kubevirt.kubeconfig, context=conf.kubevirt.kubeconfig_context
            )
        sock = stack.enter_context(preflight.listen(host, port))
        url = f"http://{host}:{sock.getsockname()[1]}"
        with preflight.starting("start-up"):
            api_db, cell_dbs = bootstrap_embedded(conf)
            password = _bootstrap(conf, root, api_db)
            roles, placement = start_roles(conf, root, api_db, cell_dbs, hosts)
            stack.callback(placement.stop)
            stack.callback(lambda: stopped.append(roles.stop(signals.work_left())))
            notifier = notifier_from_conf(conf).prepare("nova-api", conf.host)
            stack.callback(close_notifier, notifier)
            services = ApiServices(
                conf=conf, api_db=api_db, cell_dbs=cell_dbs, images=_images(conf, api_db, root),
                placement=placement.client(), **api_clients(roles.transport),
                notifier=notifier,
            )  # fmt: skip
            server = api_server(
                services, host, sock.getsockname()[1], image_api=True, metadata_api=True,
                signals=signals,
            )  # fmt: skip
            proxies = _start_console_proxies(conf, host, cell_dbs, roles)
            for proxy in proxies:
                stack.callback(proxy.stop)
            _write_clouds_yaml(conf, root, url, password)
        _announce(conf, root, f"{url}/v2.1", roles, password, proxies)
        if not signals.requested.is_set():  # a signal during start-up: nothing to serve
            server.run(sockets=[sock])
    if not all(stopped):
        LOG.warning("OpenKeel all-in-one stopped; work cut off by the timeout is settled at "
                    "the next start")  # fmt: skip
        signals.abandon()
    signals.finished()
    LOG.info("OpenKeel all-in-one stopped")
    return 0


def _bootstrap(conf: cfg.ConfigOpts, root: Path, api_db: sa.Engine) -> str | None:
    """The embedded identity service's admin (its password, made on first start) and the
    embedded network service's networks, owned by the admin project; before any role starts.
    None when the identity is not the embedded one."""
    owner, password = "admin", None
    if conf.api.auth_strategy == "embedded":
        password = identity.admin_password(root)
        service = identity.identity_service(conf, api_db, image_api=True)
        admin = service.bootstrap(password)
        if not service.store.check_password(admin.id, password):
            LOG.warning(
                "the admin password was changed since %s was written", identity.ADMIN_PASSWORD_FILE
            )
        owner = admin.default_project_id or owner
    _bootstrap_network(conf, api_db, owner)
    return password


def _start_console_proxies(
    conf: cfg.ConfigOpts, host: str, cell_dbs: dict[str, sa.Engine], roles: RoleSet
) -> list[RunningProxy]:
    """The noVNC and serial proxies on their ports (Nova's 6080 and 6083 unless configured;
    a free one when busy); the console URLs name where they listen unless a config file sets
    ``[vnc] novncproxy_base_url`` / ``[serial_console] base_url``."""
    proxies = []
    compute = ComputeRpcClient(roles.transport)
    tls = tls_settings(conf)
    secure = "" if tls is None else "s"
    for kind, (group, _host_opt, port_opt) in PROXIES.items():
        sock = bind_or_any(host, conf[group][port_opt])
        bound = sock.getsockname()[1]
        if kind == "novncproxy":
            url = f"http{secure}://{host}:{bound}/vnc_lite.html"
            conf.set_default("novncproxy_base_url", url, "vnc")
        else:
            conf.set_default("base_url", f"ws{secure}://{host}:{bound}/", "serial_console")
        app = proxy_app(conf, kind, cell_dbs, compute)
        proxies.append(start_in_thread(app, kind, sock, tls))
    return proxies


def _write_clouds_yaml(conf: cfg.ConfigOpts, root: Path, url: str, password: str | None) -> None:
    """``clouds.yaml`` for the way this cloud authenticates (none for a real Keystone)."""
    if password is not None:
        (root / "clouds.yaml").write_text(clouds_yaml(url, password))
    elif conf.api.auth_strategy == "noauth2":
        image = None if locates_glance(conf.glance) else f"{url}/image"
        network = f"{url}/networking" if conf.openkeel_network.backend == "flat" else None
        (root / "clouds.yaml").write_text(
            noauth_clouds_yaml(f"{url}/v2.1", f"{url}/identity/v3", image, network)
        )


def _bootstrap_network(conf: cfg.ConfigOpts, api_db: sa.Engine, owner: str) -> None:
    """The embedded network service's ``private`` (the flat network) and ``public``
    networks, owned by the admin project."""
    opts = conf.openkeel_network
    if opts.backend != "flat":
        return
    private = {"id": opts.network_id, "name": opts.network_name, "cidr": opts.cidr,
               "gateway": opts.gateway, "dns_nameservers": opts.dns_nameservers}  # fmt: skip
    network_service(api_db).bootstrap(owner, private)


def _overrides(root: Path, kubeconfig: str | None) -> dict[str, object]:
    """What the data directory and the command line decide, whatever a config file says."""
    return {
        "api_database.connection": f"sqlite:///{root / 'nova_api.sqlite'}",
        "database.connection": f"sqlite:///{root / 'nova.sqlite'}",
        "state_path": str(root),
        **({"compute_driver": KUBEVIRT, "kubevirt.kubeconfig": kubeconfig} if kubeconfig else {}),
    }


def _defaults(root: Path) -> dict[str, object]:
    """The all-in-one's own defaults; a ``--config-file`` may set any of them otherwise
    (``[api] auth_strategy = keystone`` with ``[keystone_authtoken]``, for one)."""
    return {
        "api.auth_strategy": "embedded",
        # Several simulated hosts share one machine: a resize may stay on its host.
        "allow_resize_to_same_host": True,
        # The simulated guests have a serial line, and the serial proxy runs here too.
        "serial_console.enabled": True,
        "log_file": str(root / "openkeel.log"),
        "use_stderr": True,
    }


def _images(conf: cfg.ConfigOpts, api_db: sa.Engine, root: Path) -> ImageService | None:
    """Glance when ``[glance]`` locates it, else the embedded image catalog (data files where
    the image API keeps them)."""
    if locates_glance(conf.glance):
        return glance_client(conf.glance)
    return EmbeddedImageCatalog(api_db, image_files(root))


def _announce(
    conf: cfg.ConfigOpts,
    root: Path,
    url: str,
    roles: RoleSet,
    password: str | None,
    proxies: Sequence[RunningProxy] = (),
) -> None:
    clouds = root / "clouds.yaml"
    hosts = ", ".join(c.hostname for c in roles.computes)
    driver = "KubeVirt" if conf.compute_driver == KUBEVIRT else "simulated"
    lines = [
        f"OpenKeel all-in-one: compute API listening on {url}",
        f"  data directory: {root}",
        f"  log file:       {logs.log_path(conf, 'openkeel-all-in-one')}",
    ]
    if password is not None:
        lines.append(
            f"  identity:       {url.removesuffix('/v2.1')}/identity"
            f"  (user admin, project admin, password {password})"
        )
    lines.append(
        f"  metadata:       {url.removesuffix('/v2.1')}/metadata  (guests' metadata service)"
    )
    if clouds.exists() and conf.api.auth_strategy != "keystone":
        lines.append(
            f"  clouds.yaml:    {clouds}  (export OS_CLIENT_CONFIG_FILE={clouds};"
            " then: openstack --os-cloud openkeel flavor list)"
        )
    lines.append(
        f"  roles:          conductor, scheduler, compute [{hosts}] ({driver} driver),"
        " embedded Placement"
    )
    for proxy in proxies:
        lines.append(f"  {proxy.kind + ':':<16}{proxy.url}")
    print("\n".join(lines), flush=True)
