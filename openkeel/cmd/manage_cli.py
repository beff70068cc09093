"""What every ``openkeel manage`` category module shares: how an action and its options are
declared (argparse under oslo.config's sub-command), how a handler reads them, the API
database engine, and the tables nova-manage prints (prettytable's default look)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.db.engine import make_engine

Handler = Callable[[cfg.ConfigOpts], int | None]
ARG = "arg_"  # prefix of sub-command argument dests, so they never shadow config options


def action(actions: Any, name: str, handler: Handler, help_: str) -> argparse.ArgumentParser:
    """Declare action ``name`` of a category, run by ``handler``."""
    parser: argparse.ArgumentParser = actions.add_parser(name, help=help_)
    parser.set_defaults(**{ARG + "handler": handler})
    return parser


def option(parser: argparse.ArgumentParser, *flags: str, dest: str, **kwargs: Any) -> None:
    """Declare an option (or, without flags, a positional argument) of an action."""
    parser.add_argument(*flags, dest=ARG + dest, **kwargs)


def arg(conf: cfg.ConfigOpts, name: str) -> Any:
    """The value of the action's option ``name``."""
    return getattr(conf.category, ARG + name)


@contextlib.contextmanager
def api_engine(conf: cfg.ConfigOpts) -> Iterator[sa.Engine]:
    """A short-lived engine on ``[api_database] connection``."""
    engine = make_engine(conf.api_database.connection)
    try:
        yield engine
    finally:
        engine.dispose()


def render_table(header: list[str], rows: list[list[str]], *, align: str = "c") -> str:
    """A table in prettytable's style, as nova-manage prints: centred cells by default,
    left-aligned (header too) with ``align="l"`` (its ``format_dict``)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"

    def cell(text: str, width: int) -> str:
        return text.ljust(width) if align == "l" else text.center(width)

    def line(cells_: list[str]) -> str:
        return "|" + "|".join(f" {cell(c, w)} " for c, w in zip(cells_, widths, strict=True)) + "|"

    return "\n".join([rule, line(header), rule, *(line(row) for row in rows), rule])


def transport_url(conf: cfg.ConfigOpts, warn_about_none: bool = True) -> str | None:
    """``--transport-url``, else ``[DEFAULT] transport_url`` (said so), checked; None (and
    why, printed) when there is none or it is invalid."""
    url: str | None = arg(conf, "transport_url")
    if not url:
        if not conf.transport_url:
            if warn_about_none:
                print(
                    "Must specify --transport-url if [DEFAULT]/transport_url is not set in the "
                    "configuration file."
                )
            return None
        print(
            "--transport-url not provided in the command line, using the value "
            "[DEFAULT]/transport_url from the configuration file"
        )
        url = str(conf.transport_url)
    problem = transport_url_problem(url)
    if problem:
        print(f"Invalid transport URL: {problem}")
        return None
    return url


def transport_url_problem(url: str) -> str | None:
    parsed = urlsplit(url)
    if not parsed.scheme:
        return "No scheme specified"
    try:
        for host in parsed.netloc.rpartition("@")[2].split(","):
            _ = urlsplit(f"//{host}").port
    except ValueError as exc:
        return str(exc)
    return None


def database_connection(conf: cfg.ConfigOpts, warn_about_none: bool = True) -> str | None:
    """``--database_connection``, else ``[database] connection`` (said so)."""
    url: str | None = arg(conf, "database_connection")
    if url:
        return url
    if not conf.database.connection:
        if warn_about_none:
            print(
                "Must specify --database_connection if [database]/connection is not set in the "
                "configuration file."
            )
        return None
    print(
        "--database_connection not provided in the command line, using the value "
        "[database]/connection from the configuration file"
    )
    return str(conf.database.connection)
