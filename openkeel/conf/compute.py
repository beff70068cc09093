"""Options of the compute role (Nova's ``[DEFAULT]`` compute options and ``[compute]``) and of
the embedded network adapter (``[openkeel_network]``).

Read by openkeel.compute (service, resource tracker, periodic tasks) and openkeel.network.
Names and defaults are Nova's except ``instance_build_timeout`` (OpenKeel: 600 s, Nova: 0 = off;
a build must never stay in BUILD forever). ``[scheduler] max_attempts`` belongs to the scheduler.
"""

from __future__ import annotations

from oslo_config import cfg

DEFAULT_OPTS = [
    cfg.IntOpt("report_interval", default=10, help="Seconds between service heartbeats."),
    cfg.BoolOpt(
        "instance_usage_audit",
        default=False,
        help="Audit each completed usage period on every compute host (task_log rows).",
    ),
    cfg.StrOpt(
        "instance_usage_audit_period",
        default="month",
        regex=r"^(hour|month|day|year)(@([0-9]+))?$",
        help="Audit period: hour, day, month or year, with an optional @offset.",
    ),
    cfg.BoolOpt("periodic_enable", default=True, help="Run the periodic tasks."),
    cfg.FloatOpt(
        "cpu_allocation_ratio", min=0.0, help="VCPU overcommit (None: initial ratio at start)."
    ),
    cfg.FloatOpt("ram_allocation_ratio", min=0.0, help="RAM overcommit (None: initial ratio)."),
    cfg.FloatOpt("disk_allocation_ratio", min=0.0, help="Disk overcommit (None: initial ratio)."),
    cfg.FloatOpt("initial_cpu_allocation_ratio", default=4.0, min=0.0, help="First VCPU ratio."),
    cfg.FloatOpt("initial_ram_allocation_ratio", default=1.0, min=0.0, help="First RAM ratio."),
    cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0, min=0.0, help="First disk ratio."),
    cfg.IntOpt("reserved_host_memory_mb", default=512, min=0, help="RAM kept for the host."),
    cfg.IntOpt("reserved_host_disk_mb", default=0, min=0, help="Disk kept for the host."),
    cfg.IntOpt("reserved_host_cpus", default=0, min=0, help="VCPUs kept for the host."),
    cfg.IntOpt(
        "heal_instance_info_cache_interval",
        default=-1,
        help="Seconds between refreshes of one server's network info cache from the network "
        "service, round robin over the host's servers (0 or less: disabled).",
    ),
    cfg.IntOpt(
        "sync_power_state_interval",
        default=600,
        help="Seconds between power state syncs (negative: disabled).",
    ),
    cfg.IntOpt(
        "update_resources_interval",
        default=0,
        help="Seconds between resource audits (0: every periodic tick, 60 s).",
    ),
    cfg.StrOpt(
        "running_deleted_instance_action",
        default="reap",
        choices=["noop", "log", "shutdown", "reap"],
        help="What to do with a guest still on this host whose server is deleted (a delete "
        "that could not reach the guest, a server deleted without a host).",
    ),
    cfg.IntOpt(
        "instance_delete_interval",
        default=300,
        help="Seconds between removals of expired console auth tokens (Nova's option of the "
        "same name; 0: every periodic tick, negative: never).",
    ),
    cfg.IntOpt(
        "running_deleted_instance_poll_interval",
        default=1800,
        help="Seconds between looks for guests of deleted servers (0 or less: never).",
    ),
    cfg.IntOpt(
        "running_deleted_instance_timeout",
        default=0,
        min=0,
        help="Seconds a server must have been deleted before its guest is acted on.",
    ),
    cfg.IntOpt(
        "reclaim_instance_interval",
        default=0,
        help="Seconds after which soft-deleted instances are really deleted (0: never).",
    ),
    cfg.IntOpt(
        "rescue_timeout",
        default=0,
        min=0,
        help="Seconds after which a rescued server is unrescued by a periodic task (0: never).",
    ),
    cfg.IntOpt(
        "instance_build_timeout",
        default=600,
        min=0,
        help="Seconds a build may take before the instance goes to ERROR (0: no limit). "
        "OpenKeel default 600; Nova's is 0.",
    ),
    cfg.IntOpt(
        "stale_task_timeout",
        default=900,
        min=0,
        help="Seconds after which an operation on an instance of this host that no thread of "
        "the compute service is running any more (its message was lost with a broker restart, "
        "or the conductor died mid-move) is settled as a restart would settle it (0: never). "
        "OpenKeel only; Nova leaves such instances in their task state.",
    ),
    cfg.IntOpt(
        "shelved_offload_time",
        default=0,
        min=-1,
        help="Seconds a shelved server stays on its host before it is offloaded (0: at "
        "once; -1: never).",
    ),
    cfg.IntOpt(
        "shelved_poll_interval",
        default=3600,
        help="Seconds between looks for shelved servers to offload (0 or less: never).",
    ),
    cfg.ListOpt(
        "non_inheritable_image_properties",
        default=["cache_in_nova", "bittorrent"],
        help="Image properties a snapshot does not copy from the server's image.",
    ),
    cfg.IntOpt("shutdown_timeout", default=60, min=0, help="Seconds of graceful shutdown."),
    cfg.IntOpt("max_concurrent_builds", default=10, min=0, help="Builds at once (0: no limit)."),
]

COMPUTE_OPTS = [
    cfg.IntOpt(
        "shutdown_retry_interval",
        default=10,
        min=1,
        help="Seconds between graceful shutdown requests.",
    ),
    cfg.IntOpt(
        "consecutive_build_service_disable_threshold",
        default=10,
        help="Failed builds in a row before the service disables itself (0: never).",
    ),
    cfg.IntOpt(
        "max_disk_devices_to_attach",
        default=-1,
        min=-1,
        help="Disk devices (local disk and volumes) one server may have (-1: no limit).",
    ),
]

NETWORK_OPTS = [
    cfg.StrOpt(
        "backend",
        default="flat",
        choices=["none", "flat", "neutron"],
        help="Network adapter: none (instances get no network), flat (embedded network) or "
        "neutron (a neutron-server, found with the [neutron] options).",
    ),
    cfg.StrOpt("network_name", default="private", help="Label of the embedded flat network."),
    cfg.StrOpt(
        "network_id",
        default="3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001",
        help="UUID of the embedded flat network.",
    ),
    cfg.StrOpt("cidr", default="10.0.0.0/24", help="IPv4 CIDR of the embedded flat network."),
    cfg.StrOpt("gateway", help="Gateway address (default: the first host address)."),
    cfg.ListOpt("dns_nameservers", default=[], help="DNS servers announced to guests."),
    cfg.StrOpt(
        "bridge", default="br100", help="Device name the flat network's VIFs are plugged into."
    ),
    cfg.StrOpt(
        "default_floating_pool",
        default="public",
        help="External network (name or id) a floating IP comes from when no pool is asked "
        "(Nova's [neutron] default_floating_pool; the all-in-one's external network is public).",
    ),
    cfg.ListOpt(
        "bandwidth_inventories",
        default=[],
        help="Bandwidth resource providers each compute node reports into Placement, where "
        "Neutron's agents would (decision 0076): entries "
        "physnet:egress_kbps:ingress_kbps[:vnic_type+vnic_type][@host+host] (vnic types "
        "default to normal; no @hosts: every host). Each becomes a child provider of the "
        "node with NET_BW_EGR_KILOBIT_PER_SEC / NET_BW_IGR_KILOBIT_PER_SEC and the traits "
        "CUSTOM_PHYSNET_<PHYSNET> and CUSTOM_VNIC_TYPE_<TYPE>, which ports with a QoS minimum "
        "bandwidth rule ask for. The embedded network's flat networks are on physnet public.",
    ),
]


IMAGE_CACHE_OPTS = [
    cfg.IntOpt(
        "manager_interval",
        default=2400,
        min=-1,
        help="Seconds between image cache manager passes, which remove what the hypervisor "
        "keeps for deleted images (Nova's option; 0: every periodic tick, -1: never).",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(IMAGE_CACHE_OPTS, group="image_cache")
    conf.register_opts(COMPUTE_OPTS, group="compute")
    conf.register_opts(NETWORK_OPTS, group="openkeel_network")
