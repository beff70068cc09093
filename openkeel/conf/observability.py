"""``[healthcheck]`` and ``[metrics]``: the health check and Prometheus metrics of every role
(``openkeel.runtime.observability``, decision 0061)."""

from __future__ import annotations

from oslo_config import cfg

HEALTHCHECK_OPTS = [
    cfg.StrOpt(
        "disable_by_file_path",
        help="While this file exists, /healthcheck answers 503 DISABLED BY FILE "
        "(oslo.middleware's disable_by_file backend).",
    ),
]
METRICS_OPTS = [
    cfg.BoolOpt("enabled", default=True, help="Record metrics and serve /metrics."),
    cfg.PortOpt(
        "port",
        default=0,
        help="Serve /metrics on this port (0: not at all); the only way to scrape the roles "
        "without HTTP (conductor, scheduler, compute).",
    ),
    cfg.HostAddressOpt("host", default="127.0.0.1", help="Address of the [metrics] port."),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register ``[healthcheck]`` and ``[metrics]`` on ``conf``."""
    conf.register_opts(HEALTHCHECK_OPTS, group="healthcheck")
    conf.register_opts(METRICS_OPTS, group="metrics")
