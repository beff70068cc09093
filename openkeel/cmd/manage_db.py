"""``openkeel manage db`` clean-up actions (nova-manage's): archive_deleted_rows, purge and
online_data_migrations. Exit codes are nova-manage's; the work is in ``openkeel.db.archive``.

Dates (``--before``) are read as nova-manage reads them (dateutil, fuzzy), naive = UTC.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from dateutil import parser as date_parser
from oslo_config import cfg

from openkeel.cmd.manage_cli import action, api_engine, arg, option, render_table
from openkeel.db import archive, cells
from openkeel.db.engine import make_engine

MAX_INT = 0x7FFFFFFF  # nova.db.constants.MAX_INT: the largest --max_rows
MIGRATION_BATCH = 50


def add_actions(actions: Any) -> None:
    """Declare the actions on the ``db`` category's sub-parsers."""
    arch = action(actions, "archive_deleted_rows", _archive,
                  "Move deleted rows from production tables to shadow tables.")  # fmt: skip
    option(arch, "--max_rows", dest="max_rows", type=int, default=1000, metavar="<number>",
           help="Maximum number of deleted rows to archive per table.")  # fmt: skip
    option(arch, "--before", dest="before", metavar="<date>",
           help="Archive only rows deleted before this date.")  # fmt: skip
    option(arch, "--verbose", dest="verbose", action="store_true",
           help="Print how many rows were archived per table.")  # fmt: skip
    option(arch, "--until-complete", dest="until_complete", action="store_true",
           help="Run continuously until all deleted rows are archived.")  # fmt: skip
    option(arch, "--purge", dest="purge", action="store_true",
           help="Purge all data from shadow tables after archive completes.")  # fmt: skip
    option(arch, "--all-cells", dest="all_cells", action="store_true",
           help="Run command across all cells.")  # fmt: skip
    option(arch, "--task-log", dest="task_log", action="store_true",
           help="Also archive task_log records.")  # fmt: skip
    option(arch, "--sleep", dest="sleep", type=int, default=0, metavar="<seconds>",
           help="Accepted for compatibility; batches follow each other at once.")  # fmt: skip
    purge = action(actions, "purge", _purge, "Purge rows from the shadow tables.")
    option(purge, "--before", dest="before", metavar="<before>",
           help="Purge rows older than this date.")  # fmt: skip
    option(purge, "--all", dest="purge_all", action="store_true",
           help="Purge all rows in the shadow tables")  # fmt: skip
    option(purge, "--verbose", dest="verbose", action="store_true",
           help="Print information about purged records")  # fmt: skip
    option(purge, "--all-cells", dest="all_cells", action="store_true",
           help="Run against all cell databases")  # fmt: skip
    online = action(actions, "online_data_migrations", _online_data_migrations,
                    "Run the online data migrations.")  # fmt: skip
    option(online, "--max-count", dest="max_count", metavar="<number>",
           help="Maximum number of objects to consider")  # fmt: skip


def _archive(conf: cfg.ConfigOpts) -> int:
    max_rows: int = arg(conf, "max_rows")
    if max_rows < 0:
        print("Must supply a positive value for max_rows")
        return 2
    if max_rows > MAX_INT:
        print(f"max rows must be <= {MAX_INT}")
        return 2
    try:
        with api_engine(conf) as api:
            all_cells = cells.list_cells(api)
    except (sa.exc.SQLAlchemyError, sa.exc.ArgumentError):
        print(
            "Failed to connect to API DB so aborting this archival attempt. Please check your "
            "config file to make sure that [api_database]/connection is set and run this "
            "command again."
        )
        return 3
    try:
        before = _date(arg(conf, "before"))
    except InvalidDate:
        return 4
    verbose, until_complete = arg(conf, "verbose"), arg(conf, "until_complete")
    if until_complete and verbose:
        sys.stdout.write("Archiving..")
    targets = [(c.name, c.database_connection or "") for c in all_cells]
    if not arg(conf, "all_cells"):
        targets = [(None, conf.database.connection)]
    archived: dict[str, int] = {}
    total = 0
    with api_engine(conf) as api:
        for name, url in targets:
            room = max_rows if until_complete else max_rows - total
            if room <= 0:
                break
            total += _archive_cell(conf, api, url, name, room, before, archived)
    if until_complete and verbose:
        print(".complete")
    if verbose:
        _print_archived(archived, bool(arg(conf, "all_cells")))
    if archived and arg(conf, "purge"):
        if verbose:
            print("Rows were archived, running purge...")
        _purge_all(conf, all_cells if arg(conf, "all_cells") else None, None, verbose)
    return int(bool(archived))


def _archive_cell(
    conf: cfg.ConfigOpts,
    api: sa.Engine,
    url: str,
    cell_name: str | None,
    max_rows: int,
    before: datetime.datetime | None,
    archived: dict[str, int],
) -> int:
    """Archive one cell database (in batches with --until-complete); rows archived there."""
    total = 0
    engine = make_engine(url)
    try:
        while True:
            batch = archive.archive_batch(
                engine, max_rows, before=before, task_log=arg(conf, "task_log")
            )
            total += batch.total
            for table, count in batch.tables.items():
                key = f"{cell_name}.{table}" if cell_name else table
                archived[key] = archived.get(key, 0) + count
            if batch.tables.get("instances"):
                for key, count in archive.forget_instances(api, batch.instance_uuids).items():
                    archived[key] = archived.get(key, 0) + count
            if not arg(conf, "until_complete") or not batch.total:
                return total
            if arg(conf, "verbose"):
                sys.stdout.write(".")
    finally:
        engine.dispose()


def _print_archived(archived: dict[str, int], by_cell: bool) -> None:
    if not archived:
        print("Nothing was archived.")
        return
    key: Callable[[tuple[str, int]], Any] = (
        (lambda item: tuple(item[0].split(".", 1))) if by_cell else (lambda item: item[0])
    )
    rows = [[name, str(count)] for name, count in sorted(archived.items(), key=key)]
    print(render_table(["Table", "Number of Rows Archived"], rows, align="l"))


def _purge(conf: cfg.ConfigOpts) -> int:
    raw_before, purge_all = arg(conf, "before"), arg(conf, "purge_all")
    if raw_before is None and not purge_all:
        print("Either --before or --all is required")
        return 1
    try:
        before = _date(raw_before)
    except InvalidDate:
        return 2
    all_cells = None
    if arg(conf, "all_cells"):
        try:
            with api_engine(conf) as api:
                all_cells = cells.list_cells(api)
        except (sa.exc.SQLAlchemyError, sa.exc.ArgumentError):
            print("Unable to get cell list from API DB. Is it configured?")
            return 4
    deleted = _purge_all(conf, all_cells, before, arg(conf, "verbose"))
    return 0 if deleted else 3


def _purge_all(
    conf: cfg.ConfigOpts,
    all_cells: list[cells.CellMapping] | None,
    before: datetime.datetime | None,
    verbose: bool,
) -> int:
    """Purge the local cell database, or every cell's; rows deleted."""
    targets = [("DB", conf.database.connection)]
    if all_cells is not None:
        targets = [(f"Cell {_identity(c)}", c.database_connection or "") for c in all_cells]
    deleted = 0
    for label, url in targets:
        engine = make_engine(url)
        try:
            deleted += archive.purge(engine, before, _reporter(label) if verbose else _silent)
        finally:
            engine.dispose()
    return deleted


def _reporter(label: str) -> Callable[[str], None]:
    def report(message: str) -> None:
        print(f"{label}: {message}")

    return report


def _silent(_message: str) -> None:
    pass


def _identity(cell: cells.CellMapping) -> str:
    """How Nova names a cell in messages: ``uuid(name)``, or the uuid alone."""
    return f"{cell.uuid}({cell.name})" if cell.name else cell.uuid


class InvalidDate(ValueError):
    """``--before`` could not be read (the reason was printed)."""


def _date(text: str | None) -> datetime.datetime | None:
    """``--before`` as a naive UTC datetime; None when absent; ``InvalidDate`` (said why)."""
    if text is None:
        return None
    try:
        parsed: datetime.datetime = date_parser.parse(text, fuzzy=True)
    except (ValueError, OverflowError) as exc:
        print(f"Invalid value for --before: {exc}")
        raise InvalidDate(text) from exc
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
    return parsed


def _online_data_migrations(conf: cfg.ConfigOpts) -> int:
    """OpenKeel writes every row in its current form: there is nothing to migrate online; the
    command answers as nova-manage does once every migration has completed."""
    raw = arg(conf, "max_count")
    if raw is not None:
        count = int(raw) if str(raw).lstrip("-").isdigit() else -1
        if count < 1:
            print("Must supply a positive value for max_number")
            return 127
    else:
        print(f"Running batches of {MIGRATION_BATCH} until complete")
    print(render_table(["Migration", "Total Needed", "Completed"], []))
    return 0
