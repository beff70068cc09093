"""The ``Notifier``: builds Nova's versioned and legacy payloads for one event and hands them to
the configured drivers, as ``[notifications] notification_format`` selects.

Built once per process by ``notifier_from_conf`` (the composition roots), bound to a publisher
with ``prepare(binary, host)`` and passed to the roles (``ComputeHost.notifier``,
``ApiServices.notifier``). A notifier without drivers (the default) builds nothing. Sending
never raises into the operation that notifies.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from oslo_config import cfg

from openkeel.domain.aggregates import Aggregate
from openkeel.domain.flavors import Flavor
from openkeel.domain.instances import Instance
from openkeel.domain.keypairs import KeyPair
from openkeel.domain.server_groups import ServerGroup
from openkeel.notifications import instance_payloads as ip
from openkeel.notifications import legacy, scheduling_payloads, versioned
from openkeel.notifications.drivers import (
    AmqpDriver,
    LogDriver,
    MemoryDriver,
    NotificationDriver,
)
from openkeel.notifications.instance_payloads import Initiator, StateChange

LOG = logging.getLogger(__name__)

Payload = Mapping[str, Any]
AuditPeriod = tuple[datetime.datetime, datetime.datetime]


@dataclasses.dataclass(frozen=True)
class Notifier:
    """Sends notifications of one publisher (``nova-compute`` on ``host``...)."""

    drivers: tuple[NotificationDriver, ...] = ()
    notification_format: str = "unversioned"
    versioned_topics: tuple[str, ...] = ("versioned_notifications",)
    legacy_topics: tuple[str, ...] = ("notifications",)
    notify_on_state_change: str | None = None
    # [notifications] bdms_in_notifications / include_share_mapping: instance payloads list
    # block devices / shares (OpenKeel lists none yet: []) instead of leaving them null.
    bdms_in_notifications: bool = False
    include_share_mapping: bool = False
    binary: str = "nova-compute"
    host: str = ""

    def prepare(self, binary: str, host: str) -> Notifier:
        """This notifier publishing as ``binary`` on ``host``."""
        return dataclasses.replace(self, binary=binary, host=host)

    @property
    def versioned_enabled(self) -> bool:
        return bool(self.drivers) and self.notification_format in ("both", "versioned")

    @property
    def legacy_enabled(self) -> bool:
        return bool(self.drivers) and self.notification_format in ("both", "unversioned")

    @property
    def enabled(self) -> bool:
        """Whether anything is sent at all (callers skip reading what they would send)."""
        return self.versioned_enabled or self.legacy_enabled

    # --- sending ---------------------------------------------------------------------------

    def send_versioned(
        self,
        event_type: str,
        payload: Payload,
        *,
        priority: str = "INFO",
        initiator: Initiator | None = None,
    ) -> None:
        """Send a built versioned payload (``publisher_id`` ``nova-compute:<host>``)."""
        if self.versioned_enabled:
            payload = self._with_listings(payload)
            publisher = f"{self.binary}:{self.host}"
            self._send(publisher, event_type, payload, priority, initiator, self.versioned_topics)

    def send_legacy(
        self,
        event_type: str,
        payload: Payload,
        *,
        priority: str = "INFO",
        initiator: Initiator | None = None,
    ) -> None:
        """Send a legacy payload (``publisher_id`` ``compute.<host>``)."""
        if self.legacy_enabled:
            service = self.binary.removeprefix("nova-") or "compute"
            publisher = f"{service}.{self.host}"
            self._send(publisher, event_type, payload, priority, initiator, self.legacy_topics)

    def _with_listings(self, payload: Payload) -> Payload:
        data = payload.get("nova_object.data")
        if not isinstance(data, dict) or "block_devices" not in data:
            return payload
        if self.bdms_in_notifications:
            data["block_devices"] = []
        if self.include_share_mapping:
            data["shares"] = []
        return payload

    def _send(
        self,
        publisher: str,
        event_type: str,
        payload: Payload,
        priority: str,
        initiator: Initiator | None,
        topics: Sequence[str],
    ) -> None:
        message = {
            "message_id": _uuid(),
            "publisher_id": publisher,
            "event_type": event_type,
            "priority": priority.upper(),
            "payload": payload,
            "timestamp": str(datetime.datetime.now(datetime.UTC).replace(tzinfo=None)),
        }
        context = _context(initiator or Initiator())
        for driver in self.drivers:
            try:
                driver.notify(context, message, priority, topics)
            except Exception:
                LOG.exception("Notification %s could not be sent", event_type)

    def _both(
        self,
        versioned_event: str,
        build_versioned: Callable[[], Payload],
        legacy_event: str | None,
        build_legacy: Callable[[], Payload] | None,
        *,
        priority: str = "INFO",
        initiator: Initiator | None = None,
    ) -> None:
        """Build and send only the formats that are enabled."""
        if self.versioned_enabled:
            self.send_versioned(versioned_event, build_versioned(), priority=priority, initiator=initiator)  # fmt: skip
        if legacy_event and build_legacy is not None and self.legacy_enabled:
            self.send_legacy(legacy_event, build_legacy(), priority=priority, initiator=initiator)

    # --- scheduling --------------------------------------------------------------------------

    def select_destinations(
        self, spec: Mapping[str, Any], phase: str, initiator: Initiator | None = None
    ) -> None:
        """``scheduler.select_destinations.<start|end>`` of a request spec (both formats)."""
        event = f"scheduler.select_destinations.{phase}"
        self._both(
            event, lambda: scheduling_payloads.request_spec_payload(spec),
            event, lambda: {"request_spec": scheduling_payloads.legacy_request_spec(spec)},
            initiator=initiator,
        )  # fmt: skip

    def compute_task_error(
        self,
        method: str,
        instance_uuid: str,
        spec: Mapping[str, Any],
        state: str | None,
        exc: BaseException,
        initiator: Initiator | None = None,
    ) -> None:
        """``compute_task.<method>.error`` (legacy ``compute_task.<method>``): a conductor task
        (build_instances, migrate_server, rebuild_server) failed; the server is in ``state``."""

        def legacy_payload() -> Payload:
            return {
                "request_spec": scheduling_payloads.legacy_request_spec(spec),
                "instance_properties": {"uuid": instance_uuid},
                "instance_id": instance_uuid,
                "state": state,
                "method": method,
                "reason": str(exc),
            }

        self._both(
            f"compute_task.{method}.error",
            lambda: scheduling_payloads.compute_task_payload(instance_uuid, spec, state, exc),
            f"compute_task.{method}", legacy_payload,
            priority="ERROR", initiator=initiator,
        )  # fmt: skip

    # --- instances -------------------------------------------------------------------------

    def instance_action(
        self,
        instance: Instance,
        action: str,
        phase: str | None,
        initiator: Initiator,
        *,
        fault: BaseException | None = None,
        extra: Mapping[str, Any] | None = None,
        legacy_too: bool = True,
    ) -> None:
        """``instance.<action>.<phase>`` (and ``compute.instance.<action>.<phase>`` unless
        Nova has no legacy twin: ``legacy_too=False``)."""
        priority = "ERROR" if phase == "error" else "INFO"
        event = f"instance.{action}.{phase}" if phase else f"instance.{action}"

        def build_legacy() -> Payload:
            info = legacy.instance_info(instance)
            return {**info, **legacy.exception_info(fault)} if fault is not None else info

        self._both(
            event,
            lambda: ip.action_payload(instance, initiator, fault=fault, action=action, extra=extra),
            legacy.legacy_event(action, phase) if legacy_too else None,
            build_legacy,
            priority=priority,
            initiator=initiator,
        )

    def instance_create(
        self,
        instance: Instance,
        phase: str,
        initiator: Initiator,
        *,
        instance_name: str,
        keypairs: Iterable[KeyPair] = (),
        fault: BaseException | None = None,
    ) -> None:
        """``instance.create.start|end|error``."""

        def build_legacy() -> Payload:
            info = legacy.instance_info(instance)
            return {**info, **legacy.exception_info(fault)} if fault is not None else info

        self._both(
            f"instance.create.{phase}",
            lambda: ip.create_payload(
                instance, initiator, instance_name=instance_name, keypairs=keypairs, fault=fault
            ),
            legacy.legacy_event("create", phase),
            build_legacy,
            priority="ERROR" if phase == "error" else "INFO",
            initiator=initiator,
        )

    def instance_update(
        self,
        before: Instance,
        after: Instance,
        initiator: Initiator,
        audit_period: AuditPeriod,
        *,
        always: bool = False,
    ) -> None:
        """``instance.update`` of a save that turned ``before`` into ``after``, as Nova's
        ``send_update``: nothing unless ``[notifications] notify_on_state_change`` is set (or
        nothing changed); the old and new states when the vm state changed (or the task
        state, with ``vm_and_task_state``), else the current states on both sides."""
        if not always and (self.notify_on_state_change is None or before == after):
            return  # (``always``: Nova's send_instance_update_notification, server tags)
        if _state_changed(self.notify_on_state_change, before, after):
            old_state, old_task_state = before.vm_state, before.task_state
        else:
            old_state, old_task_state = after.vm_state, after.task_state
        change = StateChange(
            old_state=old_state,
            state=after.vm_state,
            old_task_state=old_task_state,
            new_task_state=after.task_state,
            old_display_name=(
                before.display_name if before.display_name != after.display_name else None
            ),
        )
        self._both(
            "instance.update",
            lambda: ip.update_payload(after, initiator, change, audit_period),
            "compute.instance.update",
            lambda: legacy.instance_info(
                after,
                old_state=change.old_state,
                old_task_state=change.old_task_state,
                new_task_state=change.new_task_state,
                audit_period_beginning=str(audit_period[0]),
                audit_period_ending=str(audit_period[1]),
            ),
            initiator=initiator,
        )

    def instance_exists(
        self, instance: Instance, initiator: Initiator, audit_period: AuditPeriod
    ) -> None:
        """``instance.exists`` of the usage audit."""
        self._both(
            "instance.exists",
            lambda: ip.exists_payload(instance, initiator, audit_period),
            "compute.instance.exists",
            lambda: legacy.instance_info(
                instance,
                audit_period_beginning=str(audit_period[0]),
                audit_period_ending=str(audit_period[1]),
            ),
            initiator=initiator,
        )

    def exception(self, exc: BaseException, initiator: Initiator | None = None) -> None:
        """``compute.exception`` (Nova's wrap_exception)."""
        self._both(
            "compute.exception",
            lambda: versioned.exception_payload(exc),
            None,
            None,
            priority="ERROR",
            initiator=initiator,
        )

    # --- API resources ---------------------------------------------------------------------

    def flavor(self, action: str, flavor: Flavor, *, projects: Sequence[str] | None = None) -> None:
        """``flavor.create|update|delete`` (versioned only, as Nova)."""
        if self.versioned_enabled:
            payload = versioned.flavor_payload(flavor, projects=projects)
            self.send_versioned(f"flavor.{action}", payload)

    def keypair(
        self, action: str, phase: str, keypair: KeyPair, project_id: str | None = None
    ) -> None:
        """``keypair.create|import|delete.start|end`` and the legacy ``keypair.*``."""
        self._both(
            f"keypair.{action}.{phase}",
            lambda: versioned.keypair_payload(keypair),
            f"keypair.{action}.{phase}",
            lambda: {"tenant_id": project_id, "user_id": keypair.user_id, "key_name": keypair.name},
        )

    def aggregate(
        self,
        action: str,
        phase: str,
        aggregate: Aggregate | None,
        *,
        name: str | None = None,
        metadata: Mapping[str, str] | None = None,
        legacy_payload: Mapping[str, Any] | None = None,
    ) -> None:
        """``aggregate.<action>.start|end`` and the legacy ``aggregate.<action>.*``."""
        self._both(
            f"aggregate.{action}.{phase}",
            lambda: versioned.aggregate_payload(aggregate, name=name, metadata=metadata),
            f"aggregate.{_LEGACY_AGGREGATE.get(action, action)}.{phase}",
            (lambda: dict(legacy_payload)) if legacy_payload is not None else None,
        )

    def server_group(self, action: str, group: ServerGroup, *, members: Sequence[str] = ()) -> None:
        """``server_group.create|delete|add_member`` and the legacy ``servergroup.*``."""
        legacy_payload: dict[str, Any] = {"server_group_id": group.uuid}
        if action == "create":
            legacy_payload.update(name=group.name, policies=[group.policy] if group.policy else [])
        if action == "add_member":
            legacy_payload["instance_uuids"] = list(members)
        self._both(
            f"server_group.{action}",
            lambda: versioned.server_group_payload(group),
            f"servergroup.{'addmember' if action == 'add_member' else action}",
            lambda: legacy_payload,
        )

    def service(self, action: str, status: versioned.ServiceStatus) -> None:
        """``service.create|update|delete`` (versioned only, as Nova)."""
        if self.versioned_enabled:
            self.send_versioned(f"service.{action}", versioned.service_payload(status))


# Nova's legacy aggregate events spell two actions differently.
_LEGACY_AGGREGATE = {"add_host": "addhost", "remove_host": "removehost", "update_metadata": "updatemetadata", "update_prop": "updateprop"}  # fmt: skip


def _state_changed(mode: str | None, before: Instance, after: Instance) -> bool:
    if mode is None:
        return False
    if before.vm_state != after.vm_state:
        return True
    return mode == "vm_and_task_state" and before.task_state != after.task_state


def _context(initiator: Initiator) -> dict[str, Any]:
    """The request context keys a notification carries (no credentials, as oslo's
    _sanitize_context)."""
    return {
        "request_id": initiator.request_id,
        "user_id": initiator.user_id,
        "project_id": initiator.project_id,
        "user": initiator.user_id,
        "tenant": initiator.project_id,
        "project": initiator.project_id,
    }


def _uuid() -> str:
    return str(uuid.uuid4())


def notifier_from_conf(conf: cfg.ConfigOpts) -> Notifier:
    """The process's notifier from ``[notifications]`` and ``[oslo_messaging_notifications]``
    (no driver, or only ``noop``: a notifier that sends and builds nothing)."""
    group = conf.oslo_messaging_notifications
    drivers = tuple(d for d in (_driver(conf, name) for name in group.driver) if d is not None)
    return Notifier(
        drivers=drivers,
        notification_format=conf.notifications.notification_format,
        versioned_topics=tuple(conf.notifications.versioned_notifications_topics),
        legacy_topics=tuple(group.topics),
        notify_on_state_change=conf.notifications.notify_on_state_change,
        bdms_in_notifications=conf.notifications.bdms_in_notifications,
        include_share_mapping=conf.notifications.include_share_mapping,
        host=conf.host,
    )


def _driver(conf: cfg.ConfigOpts, name: str) -> NotificationDriver | None:
    group = conf.oslo_messaging_notifications
    if name == "noop":
        return None
    if name == "log":
        return LogDriver()
    if name == "test":
        return MemoryDriver()
    if name in ("messaging", "messagingv2"):
        url: str = group.transport_url or conf.transport_url
        if not url.startswith("rabbit://"):
            LOG.warning("Notifications over %s are logged: only rabbit:// carries them", url.split(":")[0])  # fmt: skip
            return LogDriver()
        return AmqpDriver(
            url, conf.control_exchange, envelope=name == "messagingv2", retry=group.retry
        )
    raise ValueError(f"Unknown notification driver {name!r}")


def close(notifier: Notifier) -> None:
    """Release the drivers' connections (process shutdown)."""
    for driver in notifier.drivers:
        driver.close()
