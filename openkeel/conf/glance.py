"""``[glance]`` options (Nova's names): where the image service is and how to retry it.

Read by the composition roots (:func:`locates_glance`) to choose between the Glance v2 client and
the embedded image service.
"""

from __future__ import annotations

from typing import Any

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
    cfg.StrOpt(
        "region_name",
        help="Region of the image endpoint in the caller's service catalog; set without "
        "endpoints, Glance is found there.",
    ),
    cfg.StrOpt("valid_interfaces", default="internal,public", help="Catalog interfaces to try."),
]


def locates_glance(group: Any) -> bool:
    """True when ``[glance]`` says where a real Glance is: fixed endpoints, or a
    ``region_name`` to look it up in the caller's service catalog. Otherwise the embedded
    image service is used (decision 0034)."""
    return bool(group.endpoint_override or group.api_servers or group.region_name)


def register(conf: cfg.ConfigOpts) -> None:
    """Register the ``[glance]`` group on ``conf``."""
    conf.register_opts(OPTS, group="glance")
