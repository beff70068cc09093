"""Options of the metadata service and config drive (Nova's names and defaults; decision 0058).

``[api]`` metadata and vendordata options, ``[neutron]`` metadata proxy options,
``[DEFAULT] force_config_drive`` and where ``openkeel metadata`` listens (Nova's historical
``metadata_listen`` / ``metadata_listen_port``), ``[oslo_middleware]
enable_proxy_headers_parsing`` (the requester's address from X-Forwarded-For).
"""

from __future__ import annotations

from oslo_config import cfg, types

API_OPTS = [
    cfg.IntOpt("metadata_cache_expiration", default=15, min=0,
               help="Seconds a server's metadata is cached by the metadata service (0: never)."),
    cfg.ListOpt("vendordata_providers", default=["StaticJSON"],
                item_type=types.String(choices=["StaticJSON", "DynamicJSON"]),
                help="Vendordata providers, in order."),
    cfg.StrOpt("vendordata_jsonfile_path", help="JSON file served as static vendor data."),
    cfg.ListOpt("vendordata_dynamic_targets", default=[],
                help="name@url targets asked for dynamic vendor data (vendor_data2.json)."),
    cfg.StrOpt("vendordata_dynamic_ssl_certfile", default="",
               help="CA file to verify HTTPS vendordata targets with."),
    cfg.IntOpt("vendordata_dynamic_connect_timeout", default=5, min=3,
               help="Seconds to connect to a vendordata target."),
    cfg.IntOpt("vendordata_dynamic_read_timeout", default=5, min=0,
               help="Seconds to read a vendordata target's answer."),
    cfg.BoolOpt("vendordata_dynamic_failure_fatal", default=False,
                help="A failing vendordata target fails the request (and the build)."),
    cfg.StrOpt("config_drive_skip_versions",
               default="1.0 2007-01-19 2007-03-01 2007-08-29 2007-10-10 2007-12-15 2008-02-01 2008-09-01",
               help="EC2 metadata versions left off config drives."),
    cfg.BoolOpt("local_metadata_per_cell", default=False,
                help="The metadata service reads only its own cell's database."),
    cfg.StrOpt("dhcp_domain", default="novalocal",
               help="Domain appended to hostnames in the metadata."),
]  # fmt: skip

NEUTRON_OPTS = [
    cfg.BoolOpt("service_metadata_proxy", default=False,
                help="Requests come through Neutron's metadata proxy (X-Instance-ID headers)."),
    cfg.StrOpt("metadata_proxy_shared_secret", default="", secret=True,
               help="Key of the proxy's X-Instance-ID-Signature (HMAC-SHA256)."),
]  # fmt: skip

DEFAULT_OPTS = [
    cfg.BoolOpt("force_config_drive", default=False, help="Give every server a config drive."),
    cfg.StrOpt(
        "config_drive_format",
        default="iso9660",
        choices=("iso9660", "vfat"),
        deprecated_for_removal=True,
        deprecated_since="19.0.0",
        deprecated_reason="Nova keeps it only for old libvirt; ISO 9660 is what guests expect.",
        help="Config drive image format of the drivers that build the image (the simulated "
        "driver); KubeVirt builds its own from cloudInitConfigDrive.",
    ),
    cfg.StrOpt("metadata_listen", default="0.0.0.0", help="Metadata service listen address."),
    cfg.PortOpt("metadata_listen_port", default=8775, help="Metadata service listen port."),
    cfg.StrOpt("instances_path", help="Where guests' files live (default: $state_path/instances)."),
]  # fmt: skip

MIDDLEWARE_OPTS = [
    cfg.BoolOpt("enable_proxy_headers_parsing", default=False,
                help="Take the requester's address from X-Forwarded-For (behind a proxy)."),
]  # fmt: skip


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(API_OPTS, group="api")
    conf.register_opts(NEUTRON_OPTS, group="neutron")
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(MIDDLEWARE_OPTS, group="oslo_middleware")
