"""``openkeel manage cell_v2`` host and instance actions (nova-manage's): discover_hosts,
list_hosts, update_cell, delete_host, map_instances, verify_instance.

Exit codes are nova-manage's; the database work is in ``openkeel.db.cell_admin``.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.cmd.manage_cli import (
    action,
    api_engine,
    arg,
    database_connection,
    option,
    render_table,
    transport_url,
)
from openkeel.db import cell_admin, cells

CELL_NOT_FOUND = "Cell with uuid {cell} was not found."


def add_actions(actions: Any) -> None:
    """Declare the actions on the ``cell_v2`` category's sub-parsers."""
    discover = action(
        actions, "discover_hosts", _discover_hosts, "Searches cells, or a single cell, and maps "
        "found hosts."
    )  # fmt: skip
    option(discover, "--cell_uuid", dest="cell_uuid", metavar="<cell_uuid>",
           help="If provided only this cell will be searched for new hosts to map.")  # fmt: skip
    option(discover, "--verbose", dest="verbose", action="store_true",
           help="Provide detailed output when discovering hosts.")  # fmt: skip
    option(discover, "--strict", dest="strict", action="store_true",
           help="Exit 0 only when an unmapped host was discovered.")  # fmt: skip
    option(discover, "--by-service", dest="by_service", action="store_true",
           help="Discover hosts by service instead of compute node")  # fmt: skip
    hosts = action(actions, "list_hosts", _list_hosts, "Lists the hosts in one or all v2 cells.")
    option(hosts, "--cell_uuid", dest="cell_uuid", metavar="<cell_uuid>", help="The cell.")
    update = action(actions, "update_cell", _update_cell, "Updates the properties of a cell.")
    option(update, "--cell_uuid", dest="cell_uuid", metavar="<cell_uuid>", required=True,
           help="The uuid of the cell to update.")  # fmt: skip
    option(update, "--name", dest="name", metavar="<cell_name>", help="The new name of the cell.")
    option(update, "--transport-url", dest="transport_url", metavar="<transport_url>",
           help="The new transport url for the cell message queue.")  # fmt: skip
    option(update, "--database_connection", dest="database_connection",
           metavar="<database_connection>", help="The new database url for the cell.")  # fmt: skip
    option(update, "--disable", dest="disable", action="store_true", help="Disable the cell.")
    option(update, "--enable", dest="enable", action="store_true", help="Enable the cell.")
    delete = action(actions, "delete_host", _delete_host, "Delete a host's mapping to its cell.")
    option(delete, "--cell_uuid", dest="cell_uuid", metavar="<cell_uuid>", required=True,
           help="The uuid of the cell.")  # fmt: skip
    option(delete, "--host", dest="host", metavar="<host>", required=True, help="The host.")
    mapping = action(actions, "map_instances", _map_instances, "Map instances into a cell.")
    option(mapping, "--cell_uuid", dest="cell_uuid", metavar="<cell_uuid>", required=True,
           help="Unmapped instances will be mapped to this cell.")  # fmt: skip
    option(mapping, "--max-count", dest="max_count", metavar="<max_count>",
           help="Maximum number of instances to map; run again until it exits 0.")  # fmt: skip
    option(mapping, "--reset", dest="reset_marker", action="store_true",
           help="Start from the beginning, not from where the last run stopped.")  # fmt: skip
    verify = action(actions, "verify_instance", _verify_instance, "Verify an instance mapping.")
    option(verify, "--uuid", dest="uuid", metavar="<instance_uuid>", required=True,
           help="The instance UUID to verify")  # fmt: skip
    option(verify, "--quiet", dest="quiet", action="store_true", help="Do not print anything")


def _discover_hosts(conf: cfg.ConfigOpts) -> int:
    verbose = arg(conf, "verbose")
    with api_engine(conf) as api:
        try:
            hosts = cell_admin.discover_hosts(
                api,
                arg(conf, "cell_uuid"),
                by_service=arg(conf, "by_service"),
                report=print if verbose else lambda _: None,
            )
        except sa.exc.IntegrityError as exc:  # another discover_hosts mapped it meanwhile
            print(
                "ERROR: Duplicate host mapping was encountered. This command should be run once "
                "after all compute hosts have been deployed and should not be run in parallel. "
                f"Error: {exc.orig}"
            )
            return 2
    return int(not hosts) if arg(conf, "strict") else 0


def _list_hosts(conf: cfg.ConfigOpts) -> int:
    cell_uuid = arg(conf, "cell_uuid")
    with api_engine(conf) as api:
        try:
            mappings = cell_admin.list_host_mappings(api, cell_uuid)
        except cells.CellMappingNotFound:
            print(CELL_NOT_FOUND.format(cell=cell_uuid))
            return 1
    rows = [[m.cell.name or "None", m.cell.uuid, m.host] for m in mappings]
    print(render_table(["Cell Name", "Cell UUID", "Hostname"], rows))
    return 0


def _update_cell(conf: cfg.ConfigOpts) -> int:
    cell_uuid: str = arg(conf, "cell_uuid")
    with api_engine(conf) as api:
        try:
            cell = cells.get_cell(api, cell_uuid)
        except cells.CellMappingNotFound:
            print(CELL_NOT_FOUND.format(cell=cell_uuid))
            return 1
        values: dict[str, Any] = {}
        if arg(conf, "name"):
            values["name"] = arg(conf, "name")
        url = transport_url(conf, warn_about_none=False)
        database = database_connection(conf, warn_about_none=False)
        other = cell_admin.other_cell_using(api, cell_uuid, url, database)
        if other is not None:
            print(
                "The specified transport_url and/or database_connection combination already "
                f"exists for another cell with uuid {other.uuid}."
            )
            return 3
        values |= {
            k: v for k, v in (("transport_url", url), ("database_connection", database)) if v
        }
        code = _enablement(conf, cell, values)
        if code:
            return code
        try:
            cell_admin.update_cell(api, cell_uuid, **values)
        except Exception as exc:
            print(f"Unable to update CellMapping: {exc}")
            return 2
    return 0


def _enablement(conf: cfg.ConfigOpts, cell: cells.CellMapping, values: dict[str, Any]) -> int:
    disable, enable = arg(conf, "disable"), arg(conf, "enable")
    if disable and enable:
        print("Cell cannot be disabled and enabled at the same time.")
        return 4
    if not (disable or enable):
        return 0
    if cell.is_cell0:
        print("Cell0 cannot be disabled.")
        return 5
    if disable == cell.disabled:
        print(f"Cell {cell.uuid} is already {'disabled' if disable else 'enabled'}")
    else:
        values["disabled"] = bool(disable)
    return 0


# delete_host's refusals: exit code and message, by error.
DELETE_HOST_REFUSALS: tuple[tuple[type[Exception], int, str], ...] = (
    (cells.CellMappingNotFound, 1, CELL_NOT_FOUND),
    (cell_admin.HostMappingNotFound, 2, "The host {host} was not found."),
    (cell_admin.HostInOtherCell, 3, "The host {host} was not found in the cell {cell}."),
    (cell_admin.HostHasInstances, 4, "There are instances on the host {host}."),
)


def _delete_host(conf: cfg.ConfigOpts) -> int:
    cell_uuid, host = arg(conf, "cell_uuid"), arg(conf, "host")
    with api_engine(conf) as api:
        try:
            cell_admin.delete_host(api, cell_uuid, host)
        except cells.CellError as exc:
            for error, code, message in DELETE_HOST_REFUSALS:
                if isinstance(exc, error):
                    print(message.format(cell=cell_uuid, host=host))
                    return code
            raise
    return 0


def _map_instances(conf: cfg.ConfigOpts) -> int:
    raw = arg(conf, "max_count")
    max_count: int | None = None
    if raw is not None:
        max_count = int(raw) if str(raw).lstrip("-").isdigit() else -1
        if max_count < 1:
            print("Must supply a positive value for max-count")
            return 127
    with api_engine(conf) as api:
        cell = cells.get_cell(api, arg(conf, "cell_uuid"))
        more = cell_admin.map_instances(api, cell, max_count, arg(conf, "reset_marker"))
    return 1 if more else 0


def _verify_instance(conf: cfg.ConfigOpts) -> int:
    uuid = arg(conf, "uuid")
    with api_engine(conf) as api:
        result, cell = cell_admin.verify_instance(api, uuid)
    if not arg(conf, "quiet"):
        for line in _verdict(result, uuid, cell):
            print(line)
    return int(result)


def _verdict(
    result: cell_admin.InstanceCheck, uuid: str, cell: cells.CellMapping | None
) -> list[str]:
    check = cell_admin.InstanceCheck
    if result is check.NO_MAPPING:
        return [
            f"Instance {uuid} is not mapped to a cell (upgrade is incomplete) or instance "
            "does not exist"
        ]
    if result is check.NO_CELL:
        return [f"Instance {uuid} is not mapped to a cell"]
    if result is check.DELETED:
        return [
            f"The instance with uuid {uuid} has been deleted.",
            "Execute `nova-manage db archive_deleted_rows` command to archive this deleted "
            "instance and remove its instance_mapping.",
        ]
    if result is check.ARCHIVED:
        return [
            f"The instance with uuid {uuid} has been archived.",
            "However its instance_mapping remains.",
        ]
    assert cell is not None
    return [f"Instance {uuid} is in cell: {cell.name} ({cell.uuid})"]
