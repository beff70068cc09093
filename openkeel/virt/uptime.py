"""The host uptime line drivers report (Nova's ``get_host_uptime``: the ``uptime`` command's
output, which the API passes through and clients parse: ``python-openstackclient`` splits it
into host time, uptime, users and load average, and drops it when the line does not match).

Used by the simulated and KubeVirt drivers; pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime


def uptime_line(
    now: datetime, since: datetime, *, users: int = 0, load: Sequence[float] | None = None
) -> str:
    """``" HH:MM:SS up D days, HH:MM,  N users,  load average: a, b, c"`` for a host up since
    ``since`` (both aware or both naive), as ``uptime`` prints it (``up 5 min`` under an
    hour). ``load``: the 1, 5 and 15 minute load averages, ``unknown`` when not known."""
    seconds = max(0, int((now - since).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    day_part = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    clock = f"{hours:2d}:{minutes:02d}" if hours or days else f"{minutes} min"
    averages = ", ".join(f"{value:.2f}" for value in load) if load else "unknown"
    plural = "user" if users == 1 else "users"
    return f" {now:%H:%M:%S} up {day_part}{clock},  {users} {plural},  load average: {averages}"
