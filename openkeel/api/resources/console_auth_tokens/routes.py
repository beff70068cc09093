"""Route of ``GET /os-console-auth-tokens/{id}``."""

from __future__ import annotations

from openkeel.api.resources.console_auth_tokens import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.remote_consoles import TOKENS_POLICY
from openkeel.api.validation import Versioned

QUERY = Versioned.of(("2.0", schemas.SHOW_QUERY_V21), ("2.99", schemas.SHOW_QUERY_V299))


def register(table: RouteTable) -> None:
    """Add the console auth token route to ``table``."""
    table.add("GET", "/os-console-auth-tokens/{id}",
              endpoint(handlers.show_console_auth_token, query=QUERY, policy=TOKENS_POLICY))  # fmt: skip
