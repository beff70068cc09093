"""One role per process: ``openkeel conductor|scheduler|compute --config-file nova.conf``.

The scaled-out deployment: roles talk over the ``[DEFAULT] transport_url`` (RabbitMQ), use the
Placement at ``[placement] endpoint_override`` and the databases of ``[api_database]`` and the
cell mappings. The process runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import httpx
import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.cmd import logs, preflight
from openkeel.cmd.preflight import StartupError
from openkeel.cmd.roles import (
    RoleSet,
    follow_nodes,
    node_name,
    start_compute,
    start_conductor,
    start_scheduler,
)
from openkeel.compute.service import ComputeService
from openkeel.db import cells
from openkeel.rpc.transport import get_transport
from openkeel.runtime.observability import start_metrics_server
from openkeel.runtime.shutdown import ShutdownSignals
from openkeel.virt.loading import KUBEVIRT, compute_hosts, load_driver

LOG = logging.getLogger(__name__)
ROLES = ("conductor", "scheduler", "compute")


def placement_client(conf: cfg.ConfigOpts) -> PlacementClient:
    """A client of the configured Placement (token authentication)."""
    endpoint = conf.placement.endpoint_override
    if not endpoint:
        raise StartupError("[placement] endpoint_override is required for a standalone role")
    if conf.placement.auth_type not in (None, "admin_token", "noauth", "none"):
        raise StartupError(f"[placement] auth_type {conf.placement.auth_type} is not supported")
    http = httpx.Client(base_url=endpoint, headers={"X-Auth-Token": conf.placement.token})
    return PlacementClient(http)


def cell_engines(api_db: sa.Engine) -> dict[str, sa.Engine]:
    """An engine per mapped cell (cell0 included), each checked to answer."""
    with preflight.starting("reading the cell mappings"):
        mappings = cells.list_cells(api_db)
    return {
        cell.uuid: preflight.connected_engine(
            cell.database_connection, f"the database of cell {cell.name or cell.uuid}"
        )
        for cell in mappings
        if cell.database_connection
    }


def databases(conf: cfg.ConfigOpts) -> tuple[sa.Engine, dict[str, sa.Engine]]:
    """The API database of ``[api_database] connection`` (required) and every mapped cell's,
    each checked to answer (a ``StartupError`` otherwise)."""
    if not conf.api_database.connection:
        raise StartupError("[api_database] connection is required")
    api_db = preflight.connected_engine(conf.api_database.connection, "[api_database] connection")
    return api_db, cell_engines(api_db)


def start(role: str, conf: cfg.ConfigOpts) -> RoleSet:
    """Start ``role`` with everything it needs from ``conf`` (checked first: databases,
    Placement settings, the kubeconfig of a KubeVirt compute)."""
    api_db, cell_dbs = databases(conf)
    if role == "compute" and conf.compute_driver == KUBEVIRT:
        preflight.check_kubeconfig(
            conf.kubevirt.kubeconfig, context=conf.kubevirt.kubeconfig_context
        )
    placement = placement_client(conf)
    roles = RoleSet(get_transport(conf.transport_url, exchange=conf.control_exchange))
    try:
        _start_role(role, conf, roles, placement, api_db, cell_dbs)
    except BaseException:
        roles.stop()
        roles.transport.close()
        raise
    return roles


def _start_role(
    role: str,
    conf: cfg.ConfigOpts,
    roles: RoleSet,
    placement: PlacementClient,
    api_db: sa.Engine,
    cell_dbs: dict[str, sa.Engine],
) -> None:
    transport = roles.transport
    if role == "scheduler":
        roles.scheduler = start_scheduler(conf, transport, placement, api_db, cell_dbs)
    elif role == "conductor":
        roles.conductor = start_conductor(conf, transport, placement, api_db, cell_dbs)
    else:
        cell_uuid = cells.host_cell_uuid(api_db, conf.host) or _own_cell(
            api_db, conf.database.connection
        )
        cell = (cell_uuid, cell_dbs[cell_uuid])

        def start_host(host: str) -> ComputeService:
            driver = load_driver(conf, node_name(cell[1], host))
            return start_compute(conf, transport, placement, api_db, cell, driver, host)

        for host in compute_hosts(conf):
            roles.computes.append(start_host(host))
        follow_nodes(conf, roles, start_host)


def _own_cell(api_db: sa.Engine, database: str | None) -> str:
    """The cell of an unmapped compute host: the one whose database is its ``[database]
    connection`` (as a Nova compute registers in that database), else the only cell."""
    found = [c for c in cells.list_cells(api_db) if not c.is_cell0]
    own = [c.uuid for c in found if database and c.database_connection == database]
    if own:
        return own[0]
    if len(found) != 1:
        raise StartupError(
            "host is not mapped, no cell has its [database] connection and there is not "
            "exactly one cell: map it first"
        )
    return found[0].uuid


def run(role: str, config_files: Sequence[str]) -> int:
    """Run ``role`` until SIGTERM or SIGINT, then stop gracefully (runtime.shutdown): exit 0
    when everything in hand finished, 1 when the timeout cut something off."""
    conf = preflight.load_config(config_files)
    logs.setup(conf, f"openkeel-{role}")
    signals = ShutdownSignals.from_conf(conf).install()
    with preflight.starting("start-up"):
        roles = start(role, conf)
        start_metrics_server(conf)
    print(f"OpenKeel {role} running on {conf.transport_url.split('@')[-1]}", flush=True)
    signals.wait()
    finished = roles.stop(timeout=signals.work_left())
    roles.transport.close()
    if not finished:
        LOG.warning("OpenKeel %s stopped; work cut off by the timeout is settled at the next "
                    "start", role)  # fmt: skip
        signals.abandon()
    signals.finished()
    LOG.info("OpenKeel %s stopped", role)
    return 0
