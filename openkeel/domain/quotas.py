"""Quota resources and the over-quota error: pure data shared by the quota engine and its callers.

The names are Nova's quota resource names as they appear in the API bodies
(``injected_file_path_bytes`` is configured by ``[quota] injected_file_path_length``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from openkeel.domain.errors import OverQuota

UNLIMITED = -1
"""A limit of -1 (or less) means no limit."""

# Resource -> the ``[quota]`` option giving its default (None: the nova-network leftovers,
# whose default is unlimited).
CONF_OPTION: Mapping[str, str | None] = MappingProxyType(
    {
        "cores": "cores",
        "fixed_ips": None,
        "floating_ips": None,
        "injected_file_content_bytes": "injected_file_content_bytes",
        "injected_file_path_bytes": "injected_file_path_length",
        "injected_files": "injected_files",
        "instances": "instances",
        "key_pairs": "key_pairs",
        "metadata_items": "metadata_items",
        "ram": "ram",
        "security_group_rules": None,
        "security_groups": None,
        "server_group_members": "server_group_members",
        "server_groups": "server_groups",
    }
)

RESOURCES: tuple[str, ...] = tuple(sorted(CONF_OPTION))
"""Every quota resource, sorted as Nova's ``QUOTAS.resources``."""

COUNTED: frozenset[str] = frozenset(
    {"instances", "cores", "ram", "key_pairs", "server_groups", "server_group_members"}
)
"""Resources whose usage is counted (the others are simple per-request limits)."""

USER_COUNTED: frozenset[str] = frozenset({"key_pairs", "server_group_members"})
"""Counted per user only; their usage shows as 0 in quota details and limits (as in Nova)."""

PER_PROJECT: frozenset[str] = frozenset({"fixed_ips", "floating_ips", "networks"})
"""Resources that never get per-user limits."""

NETWORK_RESOURCES: tuple[str, ...] = (
    "fixed_ips",
    "floating_ips",
    "security_group_rules",
    "security_groups",
)
PERSONALITY_RESOURCES: tuple[str, ...] = (
    "injected_file_content_bytes",
    "injected_file_path_bytes",
    "injected_files",
)


def is_unlimited(value: int) -> bool:
    """True for Nova's unlimited marker (any negative limit)."""
    return value <= UNLIMITED


@dataclass(frozen=True)
class QuotaDetail:
    """One row of ``os-quota-sets/{id}/detail``."""

    limit: int
    in_use: int
    reserved: int


@dataclass(frozen=True)
class Settable:
    """The range a new limit must fall in unless forced (-1 maximum: no maximum)."""

    minimum: int
    maximum: int


class QuotaExceeded(OverQuota):
    """A claim or check went over a limit; carries what Nova's OverQuota carries."""

    def __init__(
        self,
        overs: Sequence[str],
        quotas: Mapping[str, int],
        usages: Mapping[str, int],
        scope: str,
        message: str | None = None,
    ) -> None:
        self.overs = sorted(overs)
        self.quotas = dict(quotas)
        self.usages = dict(usages)
        self.scope = scope
        super().__init__(message or f"Quota exceeded for resources: {self.overs}")
