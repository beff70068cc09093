"""``[glance]`` options (Nova's names): where the image service is and how to retry it.

Read by the composition roots to choose between the Glance v2 client and the embedded catalog.
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.ListOpt(
        "api_servers",
        help="Glance endpoints (scheme://host:port); empty: the service catalog or, on the "
        "embedded default, the built-in image catalog.",
    ),
    cfg.StrOpt("endpoint_override", help="Always use this endpoint URL for the image service."),
    cfg.IntOpt("num_retries", default=3, min=0, help="Retries when talking to Glance."),
    cfg.IntOpt("timeout", help="HTTP timeout in seconds for Glance requests."),
    cfg.BoolOpt("debug", default=False, help="Log Glance requests and responses."),
    cfg.BoolOpt("verify_glance_signatures", default=False, help="Verify image signatures."),
    cfg.BoolOpt("enable_rbd_download", default=False, help="Download RBD images directly."),
    cfg.StrOpt("region_name", help="Region of the image endpoint in the catalog."),
    cfg.StrOpt("valid_interfaces", default="internal,public", help="Catalog interfaces to try."),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the ``[glance]`` group on ``conf``."""
    conf.register_opts(OPTS, group="glance")
