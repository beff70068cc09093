"""Instance notifications of compute operations: ``started``/``finished`` beside each
operation's instance action event (``compute_stop_instance`` -> ``instance.power_off.start``
/ ``.end``; a failure -> ``.error`` where Nova has one, and ``compute.exception``).

Called by the run helpers of openkeel.compute.operations (power._run, resize.run_step and the
operations that record their events themselves). Reads the instance only when the host's
notifier sends something; never raises. ``instance.update`` comes from the host's
records (``notifications.instance_updates.SaveNotifier``, built by ComputeService).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import (
    Instance,
    InstanceNotFound,
    InstanceUpdateConflict,
    UnexpectedDeletingTaskStateError,
)
from openkeel.notifications.instance_payloads import Initiator, resize_prep_extra
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Notified:
    """The notification action of an instance action event and the phases this host sends
    (Nova splits some over two hosts: resize_revert starts on the destination and ends on
    the source)."""

    action: str
    start: bool = True
    end: bool = True
    error: bool = False


BUILD_EVENT = "compute__do_build_and_run_instance"

# Instance action event -> notification (Nova's notify_about_instance_action call sites).
NOTIFIED = {
    BUILD_EVENT: Notified("create", error=True),
    "compute_terminate_instance": Notified("delete"),
    "compute_stop_instance": Notified("power_off"),
    "compute_start_instance": Notified("power_on"),
    "compute_reboot_instance": Notified("reboot", error=True),
    "compute_pause_instance": Notified("pause"),
    "compute_unpause_instance": Notified("unpause"),
    "compute_suspend_instance": Notified("suspend"),
    "compute_resume_instance": Notified("resume"),
    "compute_rescue_instance": Notified("rescue"),
    "compute_unrescue_instance": Notified("unrescue"),
    "compute_shelve_instance": Notified("shelve"),
    "compute_shelve_offload_instance": Notified("shelve_offload"),
    "compute_unshelve_instance": Notified("unshelve"),
    "compute_snapshot_instance": Notified("snapshot"),
    "compute_soft_delete_instance": Notified("soft_delete"),
    "compute_restore_instance": Notified("restore"),
    "compute_rebuild_instance": Notified("rebuild", error=True),
    "compute_prep_resize": Notified("resize_prep"),
    "compute_resize_instance": Notified("resize", error=True),
    "compute_finish_resize": Notified("resize_finish"),
    "compute_confirm_resize": Notified("resize_confirm"),
    "compute_revert_resize": Notified("resize_revert", end=False),
    "compute_finish_revert_resize": Notified("resize_revert", start=False),
    "compute_trigger_crash_dump": Notified("trigger_crash_dump"),
    "compute_attach_interface": Notified("interface_attach", error=True),
    "compute_detach_interface": Notified("interface_detach"),
    "compute_attach_volume": Notified("volume_attach", error=True),
    "compute_detach_volume": Notified("volume_detach"),
    "compute_swap_volume": Notified("volume_swap", error=True),
    # the source's steps notify themselves (live_migrate: _post / _rollback)
    "compute_live_migration": Notified("live_migration", start=False, end=False),
    "compute_pre_live_migration": Notified("live_migration_pre"),
    "compute_rollback_live_migration_at_destination": Notified("live_migration_rollback_dest"),
    "compute_post_live_migration_at_destination": Notified("live_migration_post_dest"),
    "compute_live_migration_abort": Notified("live_migration_abort"),
    "compute_live_migration_force_complete": Notified("live_migration_force_complete"),
}

# Not a failure to report: the instance went away or a delete took it over.
_QUIET = (InstanceNotFound, UnexpectedDeletingTaskStateError, InstanceUpdateConflict)


def initiator(context: CallContext) -> Initiator:
    return Initiator(context.request_id, context.user_id, context.project_id)


def started(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    event: str,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """``instance.<action>.start`` of the operation recorded as ``event``."""
    spec = NOTIFIED.get(event)
    if spec is not None and spec.start:
        _send(host, context, uuid, spec.action, "start", None, extra)


def finished(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    event: str,
    failure: BaseException | None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """``.end`` after success; after a failure ``.error`` (where Nova has one) and
    ``compute.exception``."""
    spec = NOTIFIED.get(event)
    if spec is None:
        return
    if failure is None:
        if spec.end:
            _send(host, context, uuid, spec.action, "end", None, extra)
        return
    if isinstance(failure, _QUIET):
        return
    if spec.error:
        _send(host, context, uuid, spec.action, "error", failure, extra)
    host.notifier.exception(failure, initiator(context))


def evacuated(host: ComputeHost, context: CallContext, instance: Instance) -> None:
    """``instance.evacuate`` from the destination as it takes the instance over; Nova sends it
    from compute with the API as source (publisher ``nova-api:<host>``), versioned only."""
    if host.notifier.enabled:
        notifier = host.notifier.prepare("nova-api", host.host)
        notifier.instance_action(instance, "evacuate", None, initiator(context), legacy_too=False)


def step(host: ComputeHost, context: CallContext, uuid: str, action: str, phase: str) -> None:
    """A notification inside an operation (``instance.shutdown.start`` within a delete)."""
    _send(host, context, uuid, action, phase, None, None)


def _send(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    action: str,
    phase: str,
    fault: BaseException | None,
    extra: Mapping[str, Any] | None,
) -> None:
    notifier = host.notifier
    if not notifier.enabled:
        return
    try:
        instance = host.records.get(uuid, read_deleted="yes")
        who = initiator(context)
        if action == "create":
            name = guest.instance_name(host.conf, instance)
            notifier.instance_create(instance, phase, who, instance_name=name, fault=fault)
        else:
            notifier.instance_action(
                instance, action, phase, who, fault=fault, extra=_extra(instance, action, extra)
            )
    except Exception:
        LOG.warning("No %s.%s notification for %s", action, phase, uuid, exc_info=True)


def _extra(instance: Instance, action: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The field an action's own payload adds, from the caller or the instance."""
    extra = dict(given or {})
    if action == "resize_prep" and "new_flavor" not in extra:
        extra.update(resize_prep_extra(instance.new_flavor or instance.flavor))
    if action == "rescue":
        extra.setdefault("rescue_image_ref", None)
    if action == "snapshot":
        extra.setdefault("snapshot_image_id", None)
    return extra
