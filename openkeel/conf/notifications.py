"""Notification options: Nova's ``[notifications]`` and oslo.messaging's
``[oslo_messaging_notifications]`` (names and defaults as Nova 34.0.0 and oslo.messaging).

Read by openkeel.notifications.emitter (``notifier_from_conf``), which the composition roots
call once per role.
"""

from __future__ import annotations

from oslo_config import cfg

NOTIFICATIONS_OPTS = [
    cfg.StrOpt(
        "notify_on_state_change",
        choices=["vm_state", "vm_and_task_state"],
        help="Send instance.update on vm state changes (vm_state) or on vm and task state "
        "changes (vm_and_task_state); unset: never.",
    ),
    cfg.StrOpt(
        "default_level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"),
        help="Default notification level for outgoing notifications.",
    ),
    cfg.StrOpt(
        "notification_format",
        default="unversioned",
        choices=("both", "versioned", "unversioned"),
        help="Which notifications are emitted: the legacy unversioned ones, the versioned "
        "ones or both (Nova's default: unversioned).",
    ),
    cfg.ListOpt(
        "versioned_notifications_topics",
        default=["versioned_notifications"],
        help="Topics of the versioned notifications.",
    ),
    cfg.BoolOpt(
        "bdms_in_notifications",
        default=False,
        help="Include block device information in versioned instance payloads.",
    ),
    cfg.BoolOpt(
        "include_share_mapping",
        default=False,
        help="Include share mapping information in versioned instance payloads.",
    ),
]

OSLO_MESSAGING_NOTIFICATIONS_OPTS = [
    cfg.MultiStrOpt(
        "driver",
        default=[],
        help="Drivers that send notifications: messagingv2, messaging, log, noop. None set: "
        "notifications are not sent (oslo.messaging's default).",
    ),
    cfg.StrOpt(
        "transport_url",
        secret=True,
        help="Transport of the notifications; unset: [DEFAULT] transport_url.",
    ),
    cfg.ListOpt(
        "topics",
        default=["notifications"],
        help="Topics of the legacy unversioned notifications.",
    ),
    cfg.IntOpt(
        "retry",
        default=-1,
        help="Attempts to send a notification after a connection error (-1: no limit, "
        "0: none). OpenKeel caps the unlimited case at a few attempts.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(NOTIFICATIONS_OPTS, group="notifications")
    conf.register_opts(OSLO_MESSAGING_NOTIFICATIONS_OPTS, group="oslo_messaging_notifications")
