"""A cast that never left the API undoes the state change it was meant to carry.

The API saves an action's task state (``powering-off``, ``deleting``, ``resize_reverting`` ...)
and then casts to compute or conductor. If the cast cannot be sent (the broker is down or
unreachable after the transport's own retries), nothing will ever clear that task state: the
server would be stuck, and the user would get an opaque 500. ``undone_if_unsent`` turns it
into a 503 naming the outage, after putting the task state back (compare-and-swap on the
state this request set, so a concurrent change is never overwritten) and running the
caller's extra undo (a migration status). A RemoteError (the other role failed) and a
MessagingTimeout (a call that may have arrived and still be running) pass through unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from openkeel.db.repositories import instances
from openkeel.domain.errors import ServiceUnavailable
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate, InstanceUpdateConflict
from openkeel.rpc.errors import MessagingError, MessagingTimeout, RemoteError

LOG = logging.getLogger(__name__)


class NotSent(ServiceUnavailable):
    """503: the request for another role could not be sent; the change was undone."""

    def __init__(self, what: str, exc: BaseException) -> None:
        super().__init__(
            f"The {what} request could not be sent to the service that carries it out "
            f"({type(exc).__name__}: {exc}); the server was left as it was. Retry later."
        )


@contextmanager
def undone_if_unsent(
    db: sa.Engine,
    uuid: str,
    what: str,
    task_state: str | None = None,
    undo: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Run the send; if it fails to leave, clear ``task_state`` (when this request set it),
    run ``undo`` and raise NotSent (503)."""
    try:
        yield
    except (RemoteError, MessagingTimeout):
        raise  # the other role failed, or may still be working: nothing to undo here
    except MessagingError as exc:
        LOG.warning("Could not send %s for server %s: %s; undoing", what, uuid, exc)
        if task_state is not None:
            try:
                with db.begin() as conn:
                    instances.update(
                        conn,
                        uuid,
                        InstanceUpdate(task_state=None),
                        expected_task_state=[task_state],
                    )
            except (InstanceNotFound, InstanceUpdateConflict):
                pass  # deleted or changed meanwhile: whoever changed it owns it now
        if undo is not None:
            undo()
        raise NotSent(what, exc) from exc


__all__ = ["NotSent", "undone_if_unsent"]
