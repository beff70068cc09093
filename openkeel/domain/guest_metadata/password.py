"""The encrypted password a guest posts to the metadata service, kept in system metadata as
four 255-character chunks ``password_0`` .. ``password_3`` (as Nova keeps it). Read by
``os-server-password`` and the metadata service, written by the metadata service's POST."""

from __future__ import annotations

from collections.abc import Mapping

CHUNKS = 4
CHUNK_LENGTH = 255
MAX_SIZE = CHUNKS * CHUNK_LENGTH
KEYS = tuple(f"password_{n}" for n in range(CHUNKS))


def joined(system_metadata: Mapping[str, str]) -> str:
    """The password the chunks hold ("" when none was set)."""
    return "".join(system_metadata.get(key) or "" for key in KEYS)


def chunked(password: str) -> dict[str, str]:
    """The system metadata items that store ``password`` ("" clears it)."""
    return {key: password[n * CHUNK_LENGTH : (n + 1) * CHUNK_LENGTH] for n, key in enumerate(KEYS)}
