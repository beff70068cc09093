"""``nova-manage`` for openkeel: ``api_db``, ``db``, ``cell_v2``, ``placement`` and ``identity``.

``main`` parses Nova's command line (``--config-file`` and the category /
action sub-commands), prints Nova's messages and returns Nova's exit codes.
The database work is in ``openkeel.db.cells``.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from oslo_config import cfg

from openkeel.cmd import manage_cells, manage_db, manage_placement
from openkeel.cmd.manage_cli import Handler, render_table
from openkeel.cmd.manage_cli import action as _action
from openkeel.cmd.manage_cli import api_engine as _api_engine
from openkeel.cmd.manage_cli import arg as _arg
from openkeel.cmd.manage_cli import database_connection as _database_connection
from openkeel.cmd.manage_cli import option as _option
from openkeel.cmd.manage_cli import transport_url as _transport_url
from openkeel.conf import services as conf_services
from openkeel.db import cells, migrate

CELL0_ERROR = (
    "ERROR: Could not access cell0.\n"
    "Has the nova_api database been created?\n"
    "Has the nova_cell0 database been created?\n"
    'Has "nova-manage api_db sync" been run?\n'
    'Has "nova-manage cell_v2 map_cell0" been run?\n'
    "Is [api_database]/connection set in nova.conf?\n"
    "Is the cell0 database connection URL correct?\n"
    "Error: %s"
)


def main(argv: list[str] | None = None) -> int:
    """Run one ``nova-manage`` command; return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    try:
        conf = _parse(args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    try:
        handler: Handler = conf.category.arg_handler
        return handler(conf) or 0
    except Exception:
        print(f"An error has occurred:\n{traceback.format_exc()}")
        return 255


def register_options(conf: cfg.ConfigOpts) -> None:
    """The nova.conf options these commands read (Nova's names)."""
    conf.register_opts(
        [cfg.StrOpt("connection", secret=True, help="SQLAlchemy URL of the API database.")],
        group="api_database",
    )
    conf.register_opts(
        [cfg.StrOpt("connection", secret=True, help="SQLAlchemy URL of the cell database.")],
        group="database",
    )
    conf.register_opt(cfg.StrOpt("transport_url", secret=True, help="Messaging transport URL."))
    conf_services.register(conf)  # [placement] for the placement category


def _parse(args: list[str]) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    register_options(conf)
    conf.register_cli_opt(
        cfg.SubCommandOpt(
            "category",
            title="Command categories",
            help="Available categories",
            handler=_add_categories,
        )
    )
    conf(args, project="nova", prog="nova-manage")
    return conf


def _add_categories(subparsers: Any) -> None:
    _add_api_db(subparsers.add_parser("api_db").add_subparsers(dest="action", required=True))
    _add_db(subparsers.add_parser("db").add_subparsers(dest="action", required=True))
    _add_cell_v2(subparsers.add_parser("cell_v2").add_subparsers(dest="action", required=True))
    _add_identity(subparsers.add_parser("identity").add_subparsers(dest="action", required=True))
    placement = subparsers.add_parser("placement").add_subparsers(dest="action", required=True)
    manage_placement.add_actions(placement)


def _add_api_db(actions: Any) -> None:
    sync = _action(
        actions, "sync", _api_db_sync, "Sync the database up to the most recent version."
    )
    _option(sync, dest="version", metavar="VERSION", nargs="?", help="Database version")
    _action(actions, "version", _api_db_version, "Print the current database version.")


def _add_db(actions: Any) -> None:
    sync = _action(actions, "sync", _db_sync, "Sync the database up to the most recent version.")
    _option(sync, dest="version", metavar="VERSION", nargs="?", help="Database version")
    _option(
        sync,
        "--local_cell",
        dest="local_cell",
        action="store_true",
        help="Only sync db in the local cell: do not attempt to fan-out to all cells",
    )
    _action(actions, "version", _db_version, "Print the current database version.")
    manage_db.add_actions(actions)


def _add_identity(actions: Any) -> None:
    boot = _action(
        actions,
        "bootstrap",
        _identity_bootstrap,
        "Create the embedded identity service's default roles and its admin user and project "
        "(keystone-manage bootstrap); an existing admin keeps their password.",
    )
    _option(boot, "--bootstrap-password", dest="password", required=True, help="Admin password")
    _option(boot, "--bootstrap-username", dest="username", default="admin", help="Admin user")
    _option(boot, "--bootstrap-project-name", dest="project", default="admin", help="Project")


def _identity_bootstrap(conf: cfg.ConfigOpts) -> int:
    from openkeel.db.identity_store import IdentityStore
    from openkeel.identity_api.service import IdentityService

    with _api_engine(conf) as engine:
        service = IdentityService(IdentityStore(engine), ())
        user = service.bootstrap(
            _arg(conf, "password"), _arg(conf, "project"), _arg(conf, "username")
        )
    print(
        f"Identity bootstrapped: user {user.name} ({user.id}), admin of project {_arg(conf, 'project')}"
    )
    return 0


def _add_cell_v2(actions: Any) -> None:
    manage_cells.add_actions(actions)
    map_cell0 = _action(actions, "map_cell0", _map_cell0, "Create a cell mapping for cell0.")
    _option(
        map_cell0,
        "--database_connection",
        dest="database_connection",
        metavar="<database_connection>",
        help="The database connection url for cell0.",
    )
    create = _action(actions, "create_cell", _create_cell, "Add a new cell to nova API database.")
    _option(create, "--name", dest="name", metavar="<cell_name>", help="The name of the cell")
    _option(
        create,
        "--database_connection",
        dest="database_connection",
        metavar="<database_connection>",
        help="The database url for the cell database",
    )
    _option(
        create,
        "--transport-url",
        dest="transport_url",
        metavar="<transport_url>",
        help="The transport url for the cell message queue",
    )
    _option(
        create,
        "--verbose",
        dest="verbose",
        action="store_true",
        help="Output the uuid of the created cell",
    )
    _option(
        create,
        "--disabled",
        dest="disabled",
        action="store_true",
        help="To create a pre-disabled cell.",
    )
    listing = _action(actions, "list_cells", _list_cells, "Lists the v2 cells in the deployment.")
    _option(
        listing,
        "--verbose",
        dest="verbose",
        action="store_true",
        help="Show sensitive details, such as passwords",
    )
    delete = _action(
        actions, "delete_cell", _delete_cell, "Delete an empty cell by the given uuid."
    )
    _option(
        delete,
        "--force",
        dest="force",
        action="store_true",
        help="Delete hosts and instance_mappings that belong to the cell as well.",
    )
    _option(
        delete,
        "--cell_uuid",
        dest="cell_uuid",
        metavar="<cell_uuid>",
        required=True,
        help="The uuid of the cell to delete.",
    )
    simple = _action(actions, "simple_cell_setup", _simple_cell_setup, "Simple cellsv2 setup.")
    _option(
        simple,
        "--transport-url",
        dest="transport_url",
        metavar="<transport_url>",
        help="The transport url for the cell message queue",
    )


def _api_db_sync(conf: cfg.ConfigOpts) -> int:
    cells.sync_api_db(conf.api_database.connection, _arg(conf, "version") or "head")
    return 0


def _api_db_version(conf: cfg.ConfigOpts) -> int:
    print(migrate.current_revision(conf.api_database.connection))
    return 0


def _db_sync(conf: cfg.ConfigOpts) -> int:
    revision = _arg(conf, "version") or "head"
    if not _arg(conf, "local_cell") and _sync_cell0(conf, revision) != 0:
        return 1
    cells.sync_cell_db(conf.database.connection, revision)
    return 0


def _sync_cell0(conf: cfg.ConfigOpts, revision: str) -> int:
    try:
        with _api_engine(conf) as api:
            cell0 = cells.get_cell(api, cells.CELL0_UUID)
        cells.sync_cell_db(cell0.database_connection or "", revision)
    except cells.CellMappingNotFound:
        print("WARNING: cell0 mapping not found - not syncing cell0.")
    except Exception as exc:
        print(CELL0_ERROR % exc)
        return 1
    return 0


def _db_version(conf: cfg.ConfigOpts) -> int:
    print(migrate.current_revision(conf.database.connection))
    return 0


def _map_cell0(conf: cfg.ConfigOpts) -> int:
    url = _arg(conf, "database_connection") or cells.default_cell0_url(conf.database.connection)
    with _api_engine(conf) as api:
        try:
            cells.map_cell0(api, url)
        except cells.CellMappingExists:
            print("Cell0 is already setup")
    return 0


def _create_cell(conf: cfg.ConfigOpts) -> int:
    transport_url = _transport_url(conf)
    if not transport_url:
        return 1
    database_connection = _database_connection(conf)
    if not database_connection:
        return 1
    with _api_engine(conf) as api:
        try:
            cell = cells.create_cell(
                api,
                name=_arg(conf, "name"),
                transport_url=transport_url,
                database_connection=database_connection,
                disabled=_arg(conf, "disabled"),
            )
        except cells.DuplicateCellConnection as exc:
            print(
                "The specified transport_url and/or database_connection combination already "
                f"exists for another cell with uuid {exc.existing_uuid}."
            )
            return 2
    if _arg(conf, "verbose"):
        print(cell.uuid)
    return 0


def _list_cells(conf: cfg.ConfigOpts) -> int:
    with _api_engine(conf) as api:
        mappings = cells.list_cells(api)
    verbose = _arg(conf, "verbose")
    show: Callable[[str | None], str] = (lambda url: url or "") if verbose else _mask_password
    rows = [
        [
            cell.name or "",
            cell.uuid,
            show(cell.transport_url),
            show(cell.database_connection),
            str(cell.disabled),
        ]
        for cell in sorted(mappings, key=lambda cell: cell.name or "")
    ]
    header = ["Name", "UUID", "Transport URL", "Database Connection", "Disabled"]
    print(render_table(header, rows))
    return 0


def _mask_password(url: str | None) -> str:
    """Hide the password in a URL as Nova's ``mask_passwd_in_url`` does."""
    parsed = urlsplit(url or "")
    netloc = parsed.netloc
    colon, at = netloc.find(":"), netloc.rfind("@")
    if 0 <= colon < at:
        netloc = netloc[:colon] + ":****@" + netloc[at + 1 :]
    # Like Nova, re-assembling drops an empty authority: none:/// -> none:/
    return urlunsplit(parsed._replace(netloc=netloc))


def _delete_cell(conf: cfg.ConfigOpts) -> int:
    cell_uuid: str = _arg(conf, "cell_uuid")
    with _api_engine(conf) as api:
        try:
            cells.delete_cell(api, cell_uuid, force=_arg(conf, "force"))
        except cells.CellMappingNotFound:
            print(f"Cell with uuid {cell_uuid} was not found.")
            return 1
        except cells.CellHasHosts:
            print(f"There are existing hosts mapped to cell with uuid {cell_uuid}.")
            return 2
        except cells.CellHasInstances:
            print(f"There are existing instances mapped to cell with uuid {cell_uuid}.")
            return 3
        except cells.CellHasInstanceMappings:
            print(
                f"There are instance mappings to cell with uuid {cell_uuid}, but all instances "
                "have been deleted in the cell."
            )
            print(
                "So execute 'nova-manage db archive_deleted_rows' to delete the instance mappings."
            )
            return 4
    return 0


def _simple_cell_setup(conf: cfg.ConfigOpts) -> int:
    transport_url = _transport_url(conf)
    if not transport_url:
        return 1
    with _api_engine(conf) as api:
        result = cells.simple_cell_setup(api, conf.database.connection, transport_url)
    if result.cell0_existed:
        print("Cell0 is already setup")
    if result.cell0_sync_error is not None:
        print(f"Unable to sync cell0 schema: {result.cell0_sync_error}")
    if result.cell is None:
        print("No hosts found to map to cell, exiting.")
        return 1
    if result.hosts_already_mapped:
        print("All hosts are already mapped to cell(s).")
    return 0
