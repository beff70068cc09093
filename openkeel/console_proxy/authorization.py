"""Console tokens as the proxies check them (Nova's NovaProxyRequestHandler._get_connect_info).

A token is valid while its row (found by hash in any cell but cell0) is unexpired, its server
still exists, and the server's compute host confirms the guest's console still listens on the
stored port (``validate_console_port``): a token outliving a move must not open another
guest's console. Tokens are not consumed: as in Nova, one opens the console until it expires.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

import sqlalchemy as sa

from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import reader
from openkeel.db.repositories import console_auth_tokens as tokens
from openkeel.db.repositories import instances
from openkeel.domain.errors import ComputeError
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.errors import MessagingError
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import ValidateConsolePort

LOG = logging.getLogger(__name__)


class ConsoleAuthorizer:
    """Turns a token into the guest endpoint it opens, or None."""

    def __init__(
        self,
        cell_dbs: Mapping[str, sa.Engine],
        compute: ComputeRpcClient | None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._cells = {u: e for u, e in cell_dbs.items() if u != CELL0_UUID}
        self._compute = compute
        self._now = now

    def authorize(self, token: str) -> tokens.ConsoleAuthorization | None:
        """The authorization of ``token`` if it may open its console now."""
        if not token:
            return None
        for engine in self._cells.values():
            with reader(engine).connect() as conn:
                found = tokens.validate(conn, token, int(self._now()))
                if found is None:
                    continue
                try:
                    host = instances.get(
                        conn, found.target.instance_uuid, relations=frozenset()
                    ).host
                except ComputeError:
                    return None
            return found if self._port_checks_out(found.target, host) else None
        return None

    def _port_checks_out(self, target: tokens.ConsoleTarget, host: str | None) -> bool:
        if self._compute is None:
            return True
        if not host:
            return False
        message = ValidateConsolePort(target.instance_uuid, port=str(target.port),
                                      console_type=target.console_type)  # fmt: skip
        context = CallContext(user_id="console-proxy", roles=("admin",))
        try:
            return bool(self._compute.call(context, host, message))
        except (ComputeError, MessagingError):
            LOG.warning("Could not check the console port of %s", target.instance_uuid)
            return False
