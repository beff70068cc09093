"""``[scheduler]`` and ``[filter_scheduler]`` options (Nova's names and defaults).

Read by the scheduler role (``openkeel.scheduler``) and by the conductor (``max_attempts``).
"""

from __future__ import annotations

from oslo_config import cfg

SCHEDULER = "scheduler"
FILTER_SCHEDULER = "filter_scheduler"

DEFAULT_FILTERS = [
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]

SCHEDULER_OPTS = [
    cfg.IntOpt(
        "max_attempts",
        default=3,
        min=1,
        help="Maximum attempts to build an instance: one chosen host plus alternates.",
    ),
    cfg.IntOpt(
        "discover_hosts_in_cells_interval",
        default=-1,
        min=-1,
        help="Interval of the periodic host discovery (negative: disabled).",
    ),
    cfg.IntOpt(
        "max_placement_results",
        default=1000,
        min=1,
        help="Maximum number of allocation candidates asked from Placement.",
    ),
    cfg.IntOpt("workers", min=0, help="Number of scheduler workers."),
    cfg.BoolOpt(
        "query_placement_for_availability_zone",
        default=False,
        help="Also ask Placement only for providers in the aggregates of the requested zone "
        "(member_of); needs host aggregates mirrored into Placement aggregates. The zone is "
        "enforced on host states either way.",
    ),
    cfg.BoolOpt("query_placement_for_routed_network_aggregates", default=False),
    cfg.BoolOpt("limit_tenants_to_placement_aggregate", default=False),
    cfg.BoolOpt("placement_aggregate_required_for_tenants", default=False),
    cfg.BoolOpt("query_placement_for_image_type_support", default=False),
    cfg.BoolOpt("enable_isolated_aggregate_filtering", default=False),
    cfg.BoolOpt("image_metadata_prefilter", default=False),
]

FILTER_SCHEDULER_OPTS = [
    cfg.IntOpt(
        "host_subset_size",
        default=1,
        min=1,
        help="Pick the host at random among this many best weighed hosts.",
    ),
    cfg.IntOpt("max_io_ops_per_host", default=8, min=0),
    cfg.IntOpt("max_instances_per_host", default=50, min=1),
    cfg.BoolOpt("track_instance_changes", default=True),
    cfg.ListOpt(
        "enabled_filters",
        default=DEFAULT_FILTERS,
        help="Filter class names applied in order (unknown names are rejected at start).",
    ),
    cfg.ListOpt(
        "weight_classes",
        default=["nova.scheduler.weights.all_weighers"],
        help="Weigher class names; the default means every weigher.",
    ),
    cfg.FloatOpt("ram_weight_multiplier", default=1.0),
    cfg.FloatOpt("cpu_weight_multiplier", default=1.0),
    cfg.FloatOpt("disk_weight_multiplier", default=1.0),
    cfg.FloatOpt("hypervisor_version_weight_multiplier", default=1.0),
    cfg.FloatOpt("num_instances_weight_multiplier", default=0.0),
    cfg.FloatOpt("io_ops_weight_multiplier", default=-1.0),
    cfg.FloatOpt("pci_weight_multiplier", default=1.0, min=0.0),
    cfg.FloatOpt("soft_affinity_weight_multiplier", default=1.0, min=0.0),
    cfg.FloatOpt("soft_anti_affinity_weight_multiplier", default=1.0, min=0.0),
    cfg.FloatOpt("build_failure_weight_multiplier", default=1000000.0),
    cfg.FloatOpt("cross_cell_move_weight_multiplier", default=1000000.0),
    cfg.BoolOpt(
        "shuffle_best_same_weighed_hosts",
        default=False,
        help="Shuffle the hosts that share the best weight before picking one.",
    ),
    cfg.StrOpt(
        "image_properties_default_architecture",
        help="Architecture assumed by ImagePropertiesFilter for images without one.",
    ),
    cfg.ListOpt("isolated_images", default=[]),
    cfg.ListOpt("isolated_hosts", default=[]),
    cfg.BoolOpt("restrict_isolated_hosts_to_isolated_images", default=True),
    cfg.BoolOpt("pci_in_placement", default=False),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register both groups on ``conf``.

    A new OptGroup each time: oslo.config keeps the registered options of a group (their
    overrides and defaults included) in the OptGroup object, copied shallowly, so one
    module-level OptGroup registered on several ConfigOpts made an override on one of them
    (a test's ``max_attempts = 2``) show in all the others."""
    conf.register_group(cfg.OptGroup(SCHEDULER, title="Scheduler configuration"))
    conf.register_opts(SCHEDULER_OPTS, group=SCHEDULER)
    conf.register_group(cfg.OptGroup(FILTER_SCHEDULER, title="Filter scheduler options"))
    conf.register_opts(FILTER_SCHEDULER_OPTS, group=FILTER_SCHEDULER)
