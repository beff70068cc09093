"""Remote console options (Nova's groups, names and defaults): ``[vnc]``, ``[spice]``,
``[serial_console]``, ``[mks]``, ``[consoleauth]``, ``[console]`` and the proxies' ``[DEFAULT]
web``.

Read by the compute role (which console types are on, the access URL bases, the token TTL) and
the console proxies (listen addresses, allowed origins, the noVNC files).
"""

from __future__ import annotations

from oslo_config import cfg

VNC = [
    cfg.BoolOpt("enabled", default=True, help="Offer VNC consoles."),
    cfg.URIOpt(
        "novncproxy_base_url",
        default="http://127.0.0.1:6080/vnc_auto.html",
        help="The noVNC page users are sent to; the token is added to its query.",
    ),
    cfg.HostAddressOpt("novncproxy_host", default="0.0.0.0", help="noVNC proxy listen address."),
    cfg.PortOpt("novncproxy_port", default=6080, help="noVNC proxy listen port."),
]
SPICE = [
    cfg.BoolOpt("enabled", default=False, help="Offer SPICE consoles."),
    cfg.URIOpt("html5proxy_base_url", default="http://127.0.0.1:6082/spice_auto.html"),
    cfg.URIOpt("spice_direct_proxy_base_url", default="http://127.0.0.1:13002/nova"),
]
SERIAL = [
    cfg.BoolOpt("enabled", default=False, help="Offer serial consoles."),
    cfg.URIOpt(
        "base_url", default="ws://127.0.0.1:6083/", help="The serial proxy's URL for clients."
    ),
    cfg.StrOpt("serialproxy_host", default="0.0.0.0", help="Serial proxy listen address."),
    cfg.PortOpt("serialproxy_port", default=6083, help="Serial proxy listen port."),
]
MKS = [
    cfg.BoolOpt("enabled", default=False, help="Offer VMware MKS consoles."),
    cfg.URIOpt("mksproxy_base_url", default="http://127.0.0.1:6090/"),
]
CONSOLEAUTH = [
    cfg.IntOpt("token_ttl", default=600, min=0, help="Seconds a console token stays valid."),
    cfg.BoolOpt(
        "enforce_session_timeout",
        default=False,
        help="Close a console connection when its token expires.",
    ),
]
CONSOLE = [
    cfg.ListOpt(
        "allowed_origins",
        default=[],
        help="Host names, besides the proxy's own, a websocket Origin may name.",
    ),
    cfg.StrOpt("ssl_ciphers", help="OpenSSL cipher list of the proxies' TLS (default: Python's)."),
    cfg.StrOpt(
        "ssl_minimum_version",
        default="default",
        choices=("default", "tlsv1_1", "tlsv1_2", "tlsv1_3"),
        help="Lowest TLS version the proxies accept.",
    ),
]
DEFAULT = [
    cfg.BoolOpt(
        "ssl_only",
        default=False,
        help="The console proxies answer TLS only, with ``cert`` and ``key`` (Nova's option; "
        "unlike websockify, a proxy without it answers plain connections only).",
    ),
    cfg.StrOpt("cert", default="self.pem", help="TLS certificate file of the console proxies."),
    cfg.StrOpt("key", help="TLS key file of the console proxies (if not in ``cert``)."),
    cfg.StrOpt(
        "web",
        default="/usr/share/novnc",
        help="Directory of the noVNC files the noVNC proxy serves (skipped when absent).",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    for group, opts in (
        ("vnc", VNC),
        ("spice", SPICE),
        ("serial_console", SERIAL),
        ("mks", MKS),
        ("consoleauth", CONSOLEAUTH),
        ("console", CONSOLE),
    ):
        conf.register_opts(opts, group=group)
    conf.register_opts(DEFAULT)
