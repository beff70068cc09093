"""``[quota]`` options: Nova's default limits and driver."""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.IntOpt("instances", default=10, min=-1, help="Instances per project."),
    cfg.IntOpt("cores", default=20, min=-1, help="Instance cores per project."),
    cfg.IntOpt("ram", default=50 * 1024, min=-1, help="Megabytes of instance RAM per project."),
    cfg.IntOpt("metadata_items", default=128, min=-1, help="Metadata items per instance."),
    cfg.IntOpt("injected_files", default=5, min=-1, help="Injected files per instance."),
    cfg.IntOpt(
        "injected_file_content_bytes", default=10 * 1024, min=-1, help="Bytes per injected file."
    ),
    cfg.IntOpt(
        "injected_file_path_length", default=255, min=-1, help="Length of an injected file path."
    ),
    cfg.IntOpt("key_pairs", default=100, min=-1, help="Key pairs per user."),
    cfg.IntOpt("server_groups", default=10, min=-1, help="Server groups per project."),
    cfg.IntOpt("server_group_members", default=10, min=-1, help="Servers per server group."),
    cfg.StrOpt(
        "driver",
        default="nova.quota.DbQuotaDriver",
        choices=[
            "nova.quota.DbQuotaDriver",
            "nova.quota.NoopQuotaDriver",
            "nova.quota.UnifiedLimitsDriver",
        ],
        help="Quota driver (Nova's names).",
    ),
    cfg.BoolOpt("recheck_quota", default=True, help="Recheck quota after creating resources."),
    cfg.BoolOpt(
        "count_usage_from_placement",
        default=False,
        help="Count cores and ram usage from Placement.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(OPTS, group="quota")
