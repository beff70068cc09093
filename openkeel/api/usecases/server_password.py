"""Server password use cases: the encrypted admin password a guest posted to the metadata
service (kept in system metadata as up to four 255-character chunks ``password_0`` to
``password_3``, as Nova keeps it), and clearing it.

Called by the /servers/{server_id}/os-server-password handlers; the metadata service's POST
(openkeel.metadata) sets it.
"""

from __future__ import annotations

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.lookup import FoundServer, find_allowed
from openkeel.db.repositories import instances
from openkeel.domain.guest_metadata.password import KEYS, joined
from openkeel.domain.instances import InstanceUpdate

POLICY = "os_compute_api:os-server-password:%s"


class ServerPasswordService:
    """The password of the servers one caller can see."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _find(self, server_id: str, rule: str) -> FoundServer:
        return find_allowed(self._services, self._context, server_id, POLICY % rule)

    def show(self, server_id: str) -> str:
        """The server's encrypted password, or ""."""
        return joined(self._find(server_id, "show").instance.system_metadata)

    def clear(self, server_id: str) -> None:
        """Forget the password (Nova sets every chunk to the empty string)."""
        found = self._find(server_id, "clear")
        if found.cell_uuid is None:
            return  # still a build request: nothing was ever posted
        inst = found.instance
        sysmeta = {**inst.system_metadata, **dict.fromkeys(KEYS, "")}
        with self._services.cell_dbs[found.cell_uuid].begin() as conn:
            instances.update(conn, inst.uuid, InstanceUpdate(system_metadata=sysmeta))
