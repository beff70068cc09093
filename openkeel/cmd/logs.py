"""Logging of every role (api, conductor, scheduler, compute, all-in-one) in one format.

Called once by each composition root after it has read its configuration: one handler
(standard error, or ``[DEFAULT] log_file``) on the root logger, carrying the
:class:`~openkeel.logcontext.RequestContextFilter` and a :class:`ContextFormatter` that writes
``logging_context_format_string`` for lines of a request (they show its request id, user and
project) and ``logging_default_format_string`` for the others, as oslo.log does.
"""

from __future__ import annotations

import logging
import sys

from oslo_config import cfg

from openkeel.cmd.preflight import StartupError
from openkeel.conf import log as log_opts
from openkeel.logcontext import NO_VALUE, RequestContextFilter

HANDLER_NAME = "openkeel"


class ContextFormatter(logging.Formatter):
    """One of two formats per record: with or without a current request."""

    def __init__(self, context_format: str, default_format: str, datefmt: str | None) -> None:
        super().__init__(default_format, datefmt)
        self._in_request = logging.Formatter(context_format, datefmt)

    def format(self, record: logging.LogRecord) -> str:
        """Format with the context format when ``record`` belongs to a request."""
        if getattr(record, "request_id", NO_VALUE) not in (NO_VALUE, None):
            return self._in_request.format(record)
        return super().format(record)


def build_handler(conf: cfg.ConfigOpts) -> logging.Handler:
    """The role's handler: its destination, filter and formatter from ``conf``."""
    handler: logging.Handler
    if conf.log_file:
        try:
            handler = logging.FileHandler(conf.log_file, encoding="utf-8")
        except OSError as exc:
            raise StartupError(f"[DEFAULT] log_file {conf.log_file}: {exc.strerror}") from exc
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.set_name(HANDLER_NAME)
    handler.addFilter(RequestContextFilter())
    handler.setFormatter(
        ContextFormatter(
            conf.logging_context_format_string,
            conf.logging_default_format_string,
            conf.log_date_format,
        )
    )
    return handler


def setup(conf: cfg.ConfigOpts) -> logging.Handler:
    """Install the role's handler on the root logger (replacing an earlier one) and levels."""
    register_options(conf)
    handler = build_handler(conf)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if conf.debug else logging.INFO)
    for pair in conf.default_log_levels:
        name, _, level = pair.partition("=")
        logging.getLogger(name.strip()).setLevel(level.strip().upper())
    logging.captureWarnings(True)
    return handler


def register_options(conf: cfg.ConfigOpts) -> None:
    """Register the logging options unless ``conf`` has them already."""
    if "logging_context_format_string" not in conf:
        log_opts.register(conf)
