"""``[DEFAULT]`` options (Nova's names)."""

from __future__ import annotations

import socket

from oslo_config import cfg

OPTS = [
    cfg.StrOpt("host", default=socket.gethostname(), help="Name of this node."),
    cfg.StrOpt(
        "compute_driver",
        default="fake.FakeDriver",
        choices=["fake.FakeDriver", "kubevirt.KubevirtDriver"],
        help="The virt driver of the compute role (Nova's option; OpenKeel has the simulated "
        "driver and KubeVirt). With KubeVirt, each Kubernetes node is one compute host.",
    ),
    cfg.StrOpt(
        "transport_url",
        secret=True,
        default="inproc://",
        help="Messaging transport URL (inproc:// for the embedded default).",
    ),
    cfg.StrOpt(
        "control_exchange",
        default="openkeel",
        help="Exchange (and queue-name prefix) of the roles' RPC on the transport "
        "(oslo.messaging's option; Nova's default is 'nova').",
    ),
    cfg.StrOpt("my_ip", default="127.0.0.1", help="IP address of this host."),
    cfg.IntOpt(
        "graceful_shutdown_timeout",
        default=180,
        min=0,
        help="Seconds a role process may take to stop after SIGTERM or SIGINT before it exits "
        "at once (oslo.service's option with Nova's default; 0: wait however long it takes).",
    ),
    cfg.IntOpt(
        "manager_shutdown_timeout",
        default=160,
        min=0,
        help="Seconds a stopping role waits for the operations it is running to finish; it "
        "should stay below graceful_shutdown_timeout (Nova's option).",
    ),
    cfg.StrOpt(
        "default_availability_zone",
        default="nova",
        help="Availability zone of compute hosts not in an aggregate with a zone.",
    ),
    cfg.StrOpt(
        "internal_service_availability_zone",
        default="internal",
        help="Availability zone shown for internal services.",
    ),
    cfg.IntOpt(
        "service_down_time",
        default=60,
        min=1,
        help="Seconds since a service last reported after which it is considered down.",
    ),
    cfg.StrOpt(
        "instance_name_template",
        default="instance-%08x",
        help="Template of instances' internal names (``%d``-style over the id, or over "
        "``%(id)s`` / ``%(uuid)s``).",
    ),
    cfg.StrOpt("default_schedule_zone", help="Zone for instances created without one."),
    cfg.StrOpt("state_path", default="./data", help="Top-level directory for state."),
    cfg.IntOpt("password_length", default=12, help="Length of generated instance passwords."),
    cfg.IntOpt(
        "max_local_block_devices",
        default=3,
        help="Local disks (image, ephemeral, swap) one server may request (-1: no limit; 0: "
        "volume-backed servers only).",
    ),
    cfg.IntOpt(
        "block_device_allocate_retries",
        default=60,
        min=0,
        help="How many more times compute checks whether a volume it created for a server "
        "is available (0: once).",
    ),
    cfg.IntOpt(
        "block_device_allocate_retries_interval",
        default=3,
        min=0,
        help="Seconds between those checks.",
    ),
    cfg.IntOpt(
        "reimage_timeout_per_gb",
        default=20,
        min=1,
        help="Seconds per GB of the image (rounded up) that a volume-backed rebuild with a "
        "new image waits for the volume service's volume-reimaged event.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(OPTS)
