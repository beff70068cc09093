"""``[api_database]`` and ``[database]`` options (Nova's names)."""

from __future__ import annotations

from oslo_config import cfg

_DB = [
    cfg.StrOpt("connection", secret=True, help="SQLAlchemy URL of the database."),
    cfg.IntOpt("max_pool_size", default=10, help="Connections kept open."),
    cfg.IntOpt("max_overflow", default=20, help="Connections allowed beyond the pool."),
    cfg.IntOpt("pool_timeout", default=30, help="Seconds to wait for a pooled connection."),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts([o for o in _DB], group="api_database")
    conf.register_opts([o for o in _DB], group="database")
