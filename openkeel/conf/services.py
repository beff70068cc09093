"""Options of outbound services: ``[placement]``, ``[keystone_authtoken]``, ``[glance]`` ..."""

from __future__ import annotations

from oslo_config import cfg

KEYSTONE_AUTHTOKEN_OPTS = [
    cfg.StrOpt("www_authenticate_uri", help="Public Identity endpoint for clients."),
    cfg.StrOpt("auth_url", help="Identity endpoint the API validates tokens with."),
    cfg.StrOpt("auth_type", default="password", help="Auth plugin of the service user."),
    cfg.StrOpt("username", help="Service user name."),
    cfg.StrOpt("password", secret=True, help="Service user password."),
    cfg.StrOpt("project_name", help="Service project."),
    cfg.StrOpt("user_domain_name", default="Default", help="Service user's domain."),
    cfg.StrOpt("project_domain_name", default="Default", help="Service project's domain."),
    cfg.StrOpt("region_name", help="Identity region."),
    cfg.IntOpt("token_cache_time", default=300, help="Seconds a validated token is cached."),
    cfg.StrOpt("service_token_roles", default="service", help="Roles of a service token."),
    cfg.StrOpt("user_domain_id", help="Service user's domain id (wins over the name)."),
    cfg.StrOpt("project_domain_id", help="Service project's domain id (wins over the name)."),
    cfg.BoolOpt(
        "include_service_catalog",
        default=True,
        help="Keep the token's service catalog in the request context.",
    ),
    cfg.IntOpt("http_connect_timeout", help="Seconds to wait for Keystone to answer."),
    cfg.IntOpt(
        "http_request_max_retries", default=3, min=0, help="Retries of a failed connection."
    ),
    cfg.StrOpt("cafile", help="CA bundle to verify Keystone's HTTPS certificate."),
    cfg.BoolOpt("insecure", default=False, help="Skip verifying Keystone's certificate."),
]

PLACEMENT_OPTS = [
    cfg.StrOpt("endpoint_override", help="Placement URL."),
    cfg.StrOpt(
        "auth_type",
        help="Auth plugin: admin_token (or noauth) sends `token`; other "
        "plugins are not supported yet by the standalone roles.",
    ),
    cfg.StrOpt("token", secret=True, default="admin", help="Token for admin_token/noauth."),
    cfg.StrOpt("region_name", help="Region."),
    cfg.StrOpt("valid_interfaces", default="internal,public", help="Endpoint interfaces."),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(KEYSTONE_AUTHTOKEN_OPTS, group="keystone_authtoken")
    conf.register_opts(PLACEMENT_OPTS, group="placement")
