"""Server groups: a named policy (affinity, anti-affinity and their soft variants, from 2.15)
applied to the servers that join the group, with optional rules (2.64
``max_server_per_host`` for anti-affinity). Built by the server group repository."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ANTI_AFFINITY = "anti-affinity"
MAX_SERVER_PER_HOST = "max_server_per_host"
# The nova-compute service version that understands max_server_per_host > 1.
CUSTOM_MAX_SERVER_RULES_VERSION = 33


@dataclass(frozen=True)
class ServerGroup:
    """One group: ``members`` are instance uuids as stored (possibly deleted ones)."""

    uuid: str
    name: str | None
    project_id: str | None
    user_id: str | None
    policy: str | None
    rules: dict[str, Any] = field(default_factory=dict)
    members: tuple[str, ...] = ()

    @property
    def typed_rules(self) -> dict[str, Any]:
        """The rules with ``max_server_per_host`` as an integer (the only known rule)."""
        if MAX_SERVER_PER_HOST in self.rules:
            return {MAX_SERVER_PER_HOST: int(self.rules[MAX_SERVER_PER_HOST])}
        return {}
