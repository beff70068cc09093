"""``[api]`` and ``[wsgi]`` options (Nova's names, plus ``auth_strategy``)."""

from __future__ import annotations

from oslo_config import cfg

API_OPTS = [
    cfg.StrOpt(
        "auth_strategy",
        default="keystone",
        choices=["keystone", "embedded", "noauth2"],
        help="keystone validates tokens with Keystone; embedded serves OpenKeel's own "
        "identity service (a Keystone v3 subset under /identity, users and projects in the "
        "API database: the all-in-one's default); noauth2 trusts "
        "'X-Auth-Token: user:project' (tests only; Nova removed noauth2 in 32.0.0).",
    ),
    cfg.IntOpt(
        "max_limit",
        default=1000,
        min=0,
        help="Maximum number of items a collection resource returns at once.",
    ),
    cfg.BoolOpt(
        "enable_instance_password",
        default=True,
        help="Return the admin password in server create and rebuild answers.",
    ),
    cfg.StrOpt("compute_link_prefix", help="Base URL replacing the host in compute links."),
    cfg.StrOpt("glance_link_prefix", help="Base URL replacing the host in image links."),
    cfg.StrOpt(
        "project_id_regex", default="[0-9a-f\\-]+", help="Project ids accepted in API URLs."
    ),
    cfg.BoolOpt(
        "list_records_by_skipping_down_cells", default=True, help="Skip down cells when listing."
    ),
    cfg.IntOpt(
        "max_servers_per_request",
        default=1000,
        min=1,
        help="Most servers one POST /servers builds (OpenKeel; Nova has no bound but quota). "
        "A larger max_count is cut to it, a larger min_count refused with 400, so a project "
        "with unlimited quota cannot make the API allocate without end.",
    ),
    cfg.StrOpt(
        "response_validation",
        default="warn",
        choices=["error", "warn", "ignore"],
        help="Validate responses against the response schemas.",
    ),
]

WSGI_OPTS = [
    cfg.StrOpt("api_paste_config", default="api-paste.ini", help="Unused; kept for nova.conf."),
    cfg.IntOpt(
        "default_pool_size", default=16, min=1, help="Worker threads that run API handlers."
    ),
    cfg.StrOpt("osapi_compute_listen", default="127.0.0.1", help="API listen address."),
    cfg.PortOpt("osapi_compute_listen_port", default=8774, help="API listen port."),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(API_OPTS, group="api")
    conf.register_opts(WSGI_OPTS[:2], group="wsgi")
    conf.register_opts(WSGI_OPTS[2:])
