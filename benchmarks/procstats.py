"""RSS and CPU time of server processes, read from /proc (Linux), for the benchmarks.

Used by benchmarks/foundation.py to compare the OpenKeel all-in-one process with Nova's
gunicorn API workers (and MariaDB, which Nova needs and OpenKeel's SQLite default does not).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcSample:
    """Memory and CPU of a set of processes at one instant."""

    pids: tuple[int, ...]
    rss_mib: tuple[float, ...]
    cpu_s: float

    @property
    def rss_total_mib(self) -> float:
        return round(sum(self.rss_mib), 1)


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    # the command name (field 2) may contain spaces; everything after ')' is fixed-format
    return raw[raw.rindex(")") + 2 :].split()


def group_pids(pgid: int) -> tuple[int, ...]:
    """Every live process whose process group is ``pgid`` (setsid'd servers: pid == pgid)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and int(fields[2]) == pgid:
                found.append(int(entry))
    return tuple(sorted(found))


def pids_of_comm(comm: str) -> tuple[int, ...]:
    """Every process whose /proc/<pid>/comm is exactly ``comm`` (e.g. PostgreSQL's backends)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == comm:
                        found.append(int(entry))
            except OSError:
                continue
    return tuple(sorted(found))


def pid_of_comm(comm: str) -> int | None:
    """The first process whose /proc/<pid>/comm is exactly ``comm`` (e.g. ``mariadbd``)."""
    found = pids_of_comm(comm)
    return found[0] if found else None


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def sample(pids: tuple[int, ...]) -> ProcSample:
    """RSS of each process and their summed user+system CPU seconds."""
    cpu = 0.0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is not None:
            cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return ProcSample(pids, tuple(_rss_mib(p) for p in pids), cpu)


def machine_busy_s() -> float:
    """Busy CPU seconds of the whole machine since boot (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:9]]
    return (sum(values) - values[3] - values[4]) / CLK_TCK
