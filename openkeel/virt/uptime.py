"""The host uptime line drivers report (Nova's ``get_host_uptime``: the ``uptime`` command's
output, which the API passes through as a string).

Used by the simulated and KubeVirt drivers; pure.
"""

from __future__ import annotations

from datetime import datetime


def uptime_line(now: datetime, since: datetime) -> str:
    """``" HH:MM:SS up D days, H:MM"`` for a host up since ``since`` (both aware or both
    naive). The users and load fields of the command are left out: no driver knows them."""
    seconds = max(0, int((now - since).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    day_part = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    return f" {now:%H:%M:%S} up {day_part}{hours}:{minutes:02d}"
