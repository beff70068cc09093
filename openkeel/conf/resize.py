"""``[DEFAULT]`` options of resize and cold migration (Nova's names and defaults).

Read by the servers API (same-host resize) and the compute resize operations.
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.BoolOpt(
        "allow_resize_to_same_host",
        default=False,
        help="Allow the destination of a resize to be the server's current host.",
    ),
    cfg.IntOpt(
        "resize_confirm_window",
        default=0,
        min=0,
        help="Seconds after which a resized server is confirmed automatically (0: never).",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)
