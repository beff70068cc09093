"""Show one server: find it, then gather what its view needs, in one reader transaction per
database for the whole request (``db.readers.Readers``).

Called by ``GET /servers/{id}``, which checks the policy against the found server's project and
decides what the view needs between the two steps.
"""

from __future__ import annotations

from types import TracebackType

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.gathering import Located, RecordGatherer, Wanted
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.api.usecases.servers.records import ServerRecord
from openkeel.db.readers import Readers


class ServerShowing:
    """``with ServerShowing(services, context) as show: show.find(...); show.record(...)``."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._readers = Readers()

    def __enter__(self) -> ServerShowing:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._readers.__exit__(kind, error, trace)

    def find(self, server_id: str, *, down_ok: bool) -> FoundServer:
        """The visible server (InstanceNotFound -> 404); ``down_ok`` (2.69): answered from the
        API DB when its cell cannot be read."""
        return find_server(
            self._services, self._context, server_id, down_ok=down_ok, readers=self._readers
        )

    def record(self, found: FoundServer, wanted: Wanted) -> ServerRecord:
        """The server with the related facts its view needs."""
        located = Located(found.instance, found.cell_uuid, found.down)
        return RecordGatherer(self._services).gather([located], wanted, self._readers)[0]
