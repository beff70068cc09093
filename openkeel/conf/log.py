"""``[DEFAULT]`` logging options (oslo.log's names), read by ``openkeel.cmd.logs``.

Every role logs through one handler in one format: ``logging_context_format_string`` for lines
written while a request is being served (it may use ``%(request_id)s``, ``%(user_id)s``,
``%(project_id)s`` and ``%(user_identity)s``), ``logging_default_format_string`` for the others.
"""

from __future__ import annotations

from oslo_config import cfg

CONTEXT_FORMAT = (
    "%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s "
    "[%(request_id)s %(user_identity)s] %(message)s"
)
DEFAULT_FORMAT = "%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [-] %(message)s"
# Chatty libraries: one line per HTTP request or SQL statement at INFO.
DEFAULT_LOG_LEVELS = [
    "alembic=WARNING",
    "amqp=WARNING",
    "kombu=WARNING",
    "sqlalchemy=WARNING",
    "httpx=WARNING",
    "httpcore=WARNING",
    "urllib3=WARNING",
    "keystoneauth=WARNING",
    "oslo_policy=WARNING",
    "stevedore=WARNING",
    "placement.requestlog=WARNING",
    "uvicorn=WARNING",
]

OPTS = [
    cfg.BoolOpt("debug", default=False, help="Log DEBUG lines too (else INFO and above)."),
    cfg.StrOpt(
        "log_file",
        help="Append the log to this file instead of standard error (relative: under "
        "log_dir when that is set).",
    ),
    cfg.StrOpt(
        "log_dir",
        help="Directory of the log file: log_file is relative to it, and without log_file "
        "each role writes <log_dir>/openkeel-<role>.log.",
    ),
    cfg.BoolOpt(
        "use_stderr",
        default=False,
        help="Also log to standard error when the log goes to a file.",
    ),
    cfg.StrOpt(
        "logging_context_format_string",
        default=CONTEXT_FORMAT,
        help="Format of log lines written while a request is served (%-style, LogRecord "
        "attributes plus request_id, user_id, project_id, user_identity).",
    ),
    cfg.StrOpt(
        "logging_default_format_string",
        default=DEFAULT_FORMAT,
        help="Format of log lines written outside any request.",
    ),
    cfg.StrOpt("log_date_format", default="%Y-%m-%d %H:%M:%S", help="Format of %(asctime)s."),
    cfg.ListOpt(
        "default_log_levels",
        default=DEFAULT_LOG_LEVELS,
        help="logger=LEVEL pairs applied after the root level.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(OPTS)
