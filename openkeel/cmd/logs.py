"""Logging of every role (api, conductor, scheduler, compute, all-in-one) in one format.

Called once by each composition root after it has read its configuration: its handlers
(``[DEFAULT] log_file``/``log_dir``, standard error when there is no file or ``use_stderr``)
on the root logger, each carrying the
:class:`~openkeel.logcontext.RequestContextFilter` and a :class:`ContextFormatter` that writes
``logging_context_format_string`` for lines of a request (they show its request id, user and
project) and ``logging_default_format_string`` for the others, as oslo.log does.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

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


def log_path(conf: cfg.ConfigOpts, binary: str = "openkeel") -> Path | None:
    """Where the role's log file is (oslo.log's rules for log_file and log_dir), or None."""
    if conf.log_file:
        path = Path(conf.log_file)
        return Path(conf.log_dir) / path if conf.log_dir and not path.is_absolute() else path
    if conf.log_dir:
        return Path(conf.log_dir) / f"{binary}.log"
    return None


def build_handlers(conf: cfg.ConfigOpts, binary: str = "openkeel") -> list[logging.Handler]:
    """The role's handlers: the file and/or standard error, each with filter and formatter."""
    handlers: list[logging.Handler] = []
    path = log_path(conf, binary)
    if path is not None:
        try:
            handlers.append(logging.FileHandler(path, encoding="utf-8"))
        except OSError as exc:
            raise StartupError(f"[DEFAULT] log_file {path}: {exc.strerror}") from exc
    if path is None or conf.use_stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        _dress(handler, conf)
    return handlers


def _dress(handler: logging.Handler, conf: cfg.ConfigOpts) -> None:
    handler.set_name(HANDLER_NAME)
    handler.addFilter(RequestContextFilter())
    handler.setFormatter(
        ContextFormatter(
            conf.logging_context_format_string,
            conf.logging_default_format_string,
            conf.log_date_format,
        )
    )


def setup(conf: cfg.ConfigOpts, binary: str = "openkeel") -> logging.Handler:
    """Install the role's handlers on the root logger (replacing earlier ones) and levels;
    returns the first (the file when there is one)."""
    register_options(conf)
    handlers = build_handlers(conf, binary)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        root.removeHandler(old)
        old.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if conf.debug else logging.INFO)
    for pair in conf.default_log_levels:
        name, _, level = pair.partition("=")
        logging.getLogger(name.strip()).setLevel(level.strip().upper())
    logging.captureWarnings(True)
    return handlers[0]


def register_options(conf: cfg.ConfigOpts) -> None:
    """Register the logging options unless ``conf`` has them already."""
    if "logging_context_format_string" not in conf:
        log_opts.register(conf)
