"""Errors the conductor records as instance faults (Nova's messages)."""

from __future__ import annotations

from openkeel.domain.errors import NoValidHost


class MaxRetriesExceeded(NoValidHost):
    """No alternate host is left (or the attempts are used up) for a failed build."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.message = f"Exceeded maximum number of retries. {reason}"
        self.args = (self.message,)
