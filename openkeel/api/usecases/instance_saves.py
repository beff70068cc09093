"""``instance.update`` of the API's instance saves (an action's task state, a rename, a lock,
a reset...), sent after the transaction that saved commits, as Nova's ``Instance.save`` in
nova-api sends it (publisher ``nova-compute:<host>``, the request as initiator).

Called by the server use cases right after they save; reads nothing more when
``[notifications] notify_on_state_change`` is unset or no driver is configured.
"""

from __future__ import annotations

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.domain.instances import Instance
from openkeel.notifications.instance_payloads import Initiator
from openkeel.notifications.instance_updates import SaveNotifier


def saves_notifier(services: ApiServices, context: RequestContext) -> SaveNotifier:
    """The save notifier of one request."""
    unit = str(getattr(services.conf, "instance_usage_audit_period", "month"))
    who = Initiator(context.request_id, context.user_id, context.project_id)
    return SaveNotifier.of(services.notifier, unit).for_request(who)


def notify_saved(
    services: ApiServices, context: RequestContext, before: Instance, after: Instance
) -> None:
    """``instance.update`` for the save that turned ``before`` into ``after``."""
    if services.notifier.enabled and services.notifier.notify_on_state_change is not None:
        saves_notifier(services, context).saved(before, after)


__all__ = ["notify_saved", "saves_notifier"]
