"""``instance.update`` on instance saves, as Nova's ``Instance.save`` sends it
(``notifications.send_update``) from whichever service saves: the API setting an action's task
state, the conductor's build and move steps, compute's operations.

``SaveNotifier`` is the observer ``openkeel.db.records.InstanceRecords`` reports saves to
(compute and conductor); the API, which saves through the repository inside its own
transactions, calls ``SaveNotifier.saved`` after committing. Nova's ``Instance.save`` sends
with ``service="compute"`` whoever calls it, so the publisher is ``nova-compute:<host>``
(legacy ``compute.<host>``) from every service, ``host`` being the saving process's
``[DEFAULT] host``. Never raises.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from openkeel.domain.audit_periods import last_completed_audit_period
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.notifications.emitter import Notifier
from openkeel.notifications.instance_payloads import Initiator

LOG = logging.getLogger(__name__)


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class SaveNotifier:
    """Sends ``instance.update`` for each save it is told of (``[notifications]
    notify_on_state_change`` set and a driver configured; otherwise it wants nothing and the
    records read nothing more)."""

    notifier: Notifier
    audit_period_unit: str = "month"
    initiator: Initiator = field(default_factory=Initiator)
    now: Callable[[], datetime.datetime] = _utcnow

    @classmethod
    def of(
        cls,
        notifier: Notifier,
        audit_period_unit: str,
        now: Callable[[], datetime.datetime] = _utcnow,
    ) -> SaveNotifier:
        """Publishing as ``nova-compute`` on the notifier's host, as Nova's save does."""
        publisher = notifier.prepare("nova-compute", notifier.host)
        return cls(publisher, audit_period_unit, Initiator(), now)

    @property
    def enabled(self) -> bool:
        return self.notifier.enabled and self.notifier.notify_on_state_change is not None

    def wants(self, changes: InstanceUpdate) -> bool:
        return self.enabled and bool(changes.changes())

    def for_request(self, initiator: Initiator) -> SaveNotifier:
        """This notifier naming the request that saves (``action_initiator_*``)."""
        return SaveNotifier(self.notifier, self.audit_period_unit, initiator, self.now)

    def saved(self, before: Instance, after: Instance) -> None:
        if not self.enabled:
            return
        try:
            self.notifier.instance_update(before, after, self.initiator, self.audit_period())
        except Exception:
            LOG.warning("No instance.update for %s", before.uuid, exc_info=True)

    def audit_period(self) -> tuple[datetime.datetime, datetime.datetime]:
        """Nova's ``audit_period_bounds(current_period=True)``: from the end of the last
        completed period until now."""
        now = self.now()
        return last_completed_audit_period(self.audit_period_unit, now)[1], now


__all__ = ["SaveNotifier"]
