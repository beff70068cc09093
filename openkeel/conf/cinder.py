"""``[cinder]`` options (Nova's names: ``catalog_info``, ``endpoint_template``,
``os_region_name``, ``http_retries``, ``cross_az_attach``, ``debug`` plus keystoneauth1's
session and auth options, the service user Nova makes its admin calls with) and
``[openkeel_volume] backend``, which picks the volume adapter.

Read by :mod:`openkeel.volume.factory` and the Cinder REST adapter (openkeel.volume.cinder).
"""

from __future__ import annotations

from oslo_config import cfg

from openkeel.conf.keystoneauth import session_and_auth_opts

GROUP = "cinder"

OPTS = [
    cfg.StrOpt(
        "catalog_info",
        default="volumev3::publicURL",
        regex=r"^[^:]*:[^:]*:[^:]*$",
        help="<service_type>:<service_name>:<interface> of Cinder in the service catalog.",
    ),
    cfg.StrOpt(
        "endpoint_template",
        help="Cinder's endpoint instead of the catalog's, e.g. "
        "http://cinder:8776/v3/%(project_id)s.",
    ),
    cfg.StrOpt("os_region_name", help="Region of Cinder's endpoint in the catalog."),
    cfg.IntOpt(
        "http_retries", default=3, min=0, help="Connection retries of idempotent Cinder calls."
    ),
    cfg.BoolOpt(
        "cross_az_attach",
        default=True,
        help="Allow attaching a volume of another availability zone than the server's.",
    ),
    cfg.BoolOpt("debug", default=False, help="Log Cinder's requests and responses."),
]

BACKEND_OPTS = [
    cfg.StrOpt(
        "backend",
        default="embedded",
        choices=[
            ("embedded", "the all-in-one's own volume service, in process"),
            ("cinder", "a real Cinder (v3, microversion 3.44+) found with [cinder]"),
        ],
        help="The block storage service Nova's side talks to.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register ``[cinder]`` and ``[openkeel_volume]``."""
    conf.register_opts(OPTS, group=GROUP)
    conf.register_opts(session_and_auth_opts(), group=GROUP)
    conf.register_opts(BACKEND_OPTS, group="openkeel_volume")
