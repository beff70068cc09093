"""``openkeel status upgrade check`` (nova-status): is the deployment ready to run?

oslo.upgradecheck runs the checks and prints its table (or ``--json``); the exit code is the
worst result: 0 success, 1 warning, 2 failure, 255 when a check itself broke. The checks of
Nova 34.0.0 that apply to OpenKeel, under Nova's names (decision 0061):

- Cells v2: cell0 and at least one cell mapped; host mappings, or no compute nodes yet.
- Placement API: ``[placement] endpoint_override`` answers its version document with a
  max_version of at least 1.36.
- Policy File JSON to YAML Migration: oslo.upgradecheck's own check.
- Older than N-1 computes: no nova-compute service below the oldest supported level.

Left out: Cinder API (no volume service configured), hw_machine_type unset (libvirt only),
Service User Token Configuration (OpenKeel's roles send no service tokens).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence

import httpx
import sqlalchemy as sa
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_upgradecheck import common_checks, upgradecheck

from openkeel.conf import services as conf_services
from openkeel.db import cells
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema

MIN_PLACEMENT_MICROVERSION = (1, 36)
# Nova 34.0.0's oldest supported compute: 'Gazpacho', service version 72.
OLDEST_SUPPORTED_RELEASE, OLDEST_SUPPORTED_LEVEL = "Gazpacho", 72

Result, Code = upgradecheck.Result, upgradecheck.Code


class UpgradeChecks(upgradecheck.UpgradeCommands):
    """The checks, reading ``conf``."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def _check_cellsv2(self) -> upgradecheck.Result:
        with _engine(self.conf.api_database.connection) as api:
            mappings = cells.list_cells(api)
            if len(mappings) < 2:
                return Result(Code.FAILURE, "There needs to be at least two cell mappings, one "
                              "for cell0 and one for your first cell. Run command 'nova-manage "
                              "cell_v2 simple_cell_setup' and then retry.")  # fmt: skip
            if not any(cell.is_cell0 for cell in mappings):
                return Result(Code.FAILURE, "No cell0 mapping found. Run command 'nova-manage "
                              "cell_v2 simple_cell_setup' and then retry.")  # fmt: skip
            with api.connect() as connection:
                hosts = connection.execute(
                    sa.select(sa.func.count()).select_from(api_schema.host_mappings)
                ).scalar_one()
        if hosts:
            return Result(Code.SUCCESS)
        if _count_compute_nodes(mappings):
            return Result(Code.FAILURE, "No host mappings found but there are compute nodes. "
                          "Run command 'nova-manage cell_v2 simple_cell_setup' and then "
                          "retry.")  # fmt: skip
        return Result(Code.SUCCESS, "No host mappings or compute nodes were found. Remember to "
                      "run command 'nova-manage cell_v2 discover_hosts' when new compute hosts "
                      "are deployed.")  # fmt: skip

    def _check_placement(self) -> upgradecheck.Result:
        endpoint = self.conf.placement.endpoint_override
        if not endpoint:
            return Result(Code.FAILURE, "Placement API endpoint not found.")
        headers = {"X-Auth-Token": self.conf.placement.token or ""}
        try:
            resp = httpx.get(endpoint.rstrip("/") + "/", headers=headers, timeout=10)
        except httpx.HTTPError:
            return Result(Code.FAILURE, "Discovery for placement API URI failed.")
        if resp.status_code == 401:
            return Result(Code.FAILURE, "Placement service credentials do not work.")
        if resp.status_code >= 400:
            return Result(Code.FAILURE, "Placement API does not seem to be running.")
        text = str(resp.json()["versions"][0]["max_version"])
        major, _, minor = text.partition(".")
        if (int(major), int(minor)) < MIN_PLACEMENT_MICROVERSION:
            needed = ".".join(map(str, MIN_PLACEMENT_MICROVERSION))
            return Result(Code.FAILURE, f"Placement API version {needed} needed, you have "
                          f"{text}.")  # fmt: skip
        return Result(Code.SUCCESS)

    def _check_old_computes(self) -> upgradecheck.Result:
        with _engine(self.conf.api_database.connection) as api:
            mappings = cells.list_cells(api)
        levels = [level for cell in mappings for level in _compute_levels(cell)]
        lowest = min(levels, default=0)
        if lowest and lowest < OLDEST_SUPPORTED_LEVEL:
            return Result(Code.FAILURE, "Current Nova version does not support computes older "
                          f"than {OLDEST_SUPPORTED_RELEASE} but the minimum compute service "
                          f"level in your system is {lowest} and the oldest supported service "
                          f"level is {OLDEST_SUPPORTED_LEVEL}.")  # fmt: skip
        return Result(Code.SUCCESS)

    def _check_policy_json(self) -> upgradecheck.Result:
        return common_checks.check_policy_json(self, self.conf)

    _upgrade_checks = (
        ("Cells v2", _check_cellsv2),
        ("Placement API", _check_placement),
        ("Policy File JSON to YAML Migration", _check_policy_json),
        ("Older than N-1 computes", _check_old_computes),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``upgrade check [--json]``; the worst result's code (255: a check broke)."""
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt("connection", secret=True)], group="api_database")
    conf_services.register(conf)
    policy_opts.set_defaults(conf)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return upgradecheck.main(conf, "nova", UpgradeChecks(conf), args, default_config_files=[])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1


@contextlib.contextmanager
def _engine(url: str | None) -> Iterator[sa.Engine]:
    """A short-lived engine on ``url``."""
    if not url:
        raise cells.CellError("[api_database] connection is not set")
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


def _count_compute_nodes(mappings: list[cells.CellMapping]) -> int:
    nodes = cell_schema.compute_nodes
    total = 0
    for cell in mappings:
        if cell.is_cell0 or not cell.database_connection:
            continue
        with cells.cell_engine(cell.database_connection) as engine, engine.connect() as conn:
            query = sa.select(sa.func.count()).select_from(nodes).where(nodes.c.deleted == 0)
            total += conn.execute(query).scalar_one()
    return total


def _compute_levels(cell: cells.CellMapping) -> list[int]:
    if cell.is_cell0 or not cell.database_connection:
        return []
    services = cell_schema.services
    query = sa.select(services.c.version).where(
        services.c.deleted == 0, services.c.binary == "nova-compute"
    )
    with cells.cell_engine(cell.database_connection) as engine, engine.connect() as conn:
        return [int(v) for v in conn.execute(query).scalars() if v is not None]
