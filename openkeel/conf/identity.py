"""``[identity]`` options: the embedded identity service (``[api] auth_strategy = embedded``).

Keystone's own names where it has one (``[token] expiration``).
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.IntOpt(
        "token_expiration",
        default=3600,
        min=60,
        help="Seconds a token of the embedded identity service stays valid (Keystone's "
        "[token] expiration).",
    ),
    cfg.IntOpt(
        "token_cache_time",
        default=60,
        min=0,
        help="Seconds the compute API keeps a validated token before checking it again. A "
        "change made through this process's identity API (revocation, role, user, project) "
        "clears the cache at once; one made through another API process is seen after this.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group="identity")
