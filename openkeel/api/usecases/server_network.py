"""What the use cases on a server's network side share: the adapter, and the server found and
authorized under one policy family (``policy % rule`` on the server's project)."""

from __future__ import annotations

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.lookup import FoundServer, find_server
from openkeel.network.factory import get_network_adapter


class ServerNetworkUseCase:
    policy = "%s"

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._network = get_network_adapter(services.conf, services.api_db)

    def _server(self, server_id: str, rule: str) -> FoundServer:
        found = find_server(self._services, self._context, server_id)
        self._context.can(self.policy % rule, {"project_id": found.instance.project_id})
        return found
