"""The leak check every test runs under (tests/conftest.py): no thread or socket left behind.

A thread that outlives its test keeps using objects its test tore down; a socket whose owner
closed it under a reading thread lets that thread read whatever gets the descriptor number next
(CI saw a KubeVirt watch corrupt a SQLite test database that way). So after each test (its
fixtures torn down) the threads and socket descriptors that did not exist before it must be
gone, after a short bounded join.

Resources of fixtures wider than one test (module, session) are theirs while they live: what
appears while such a fixture is set up is excused until it is finalized, and must be gone then.
Long-lived clients and servers also open connections (and threads) later, during tests; their
owners declare them with :func:`owned_by` (what they hold is computed at each check) and drop
the declaration with :func:`released` once they have stopped. Besides that,
:data:`PROCESS_WIDE_THREADS` lists the few threads that legitimately live for the whole process.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

JOIN_TIMEOUT = 2.0  # bounded wait for threads (and their sockets) that are just ending

# name prefix -> why it may outlive the test that started it
PROCESS_WIDE_THREADS: dict[str, str] = {}


@dataclass(frozen=True)
class Owner:
    """A declared owner: what it holds now (sockets or descriptors, and threads)."""

    reason: str
    sockets: Callable[[], Iterable[Any]]
    threads: Callable[[], Iterable[threading.Thread]] = lambda: ()


_owners: list[Owner] = []


def owned_by(
    reason: str,
    sockets: Callable[[], Iterable[Any]],
    threads: Callable[[], Iterable[threading.Thread]] = lambda: (),
) -> Owner:
    """Declare an owner of sockets (and threads) that outlives single tests: a process-wide
    client, or a module fixture's server. Its holdings are computed at each check."""
    owner = Owner(reason, sockets, threads)
    _owners.append(owner)
    return owner


def released(owner: Owner) -> None:
    """The owner has stopped: what it held counts again (and must be gone)."""
    if owner in _owners:
        _owners.remove(owner)


def kube_client_sockets(client: Any) -> Callable[[], list[int]]:
    """The descriptors a KubeClient holds: its pooled connections and its watch streams."""

    def found() -> list[int]:
        fds = [_fd(s) for s in httpx_sockets(client._http)]
        with client._cond:
            streams = list(client._watches)
        for stream in streams:
            fds += [_fd(s) for s in httpx_sockets(stream._http)]
        return fds

    return found


def httpx_sockets(http: Any) -> list[Any]:
    """The sockets of an httpx.Client's connection pool (httpcore internals, read only)."""
    pool = getattr(getattr(http, "_transport", None), "_pool", None)
    found = []
    for conn in list(getattr(pool, "connections", [])):
        inner = getattr(conn, "_connection", None)
        stream = getattr(inner, "_network_stream", None)
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            found.append(sock)
    return found


def _fd(sock: Any) -> int:
    return sock if isinstance(sock, int) else int(sock.fileno())  # -1 once closed


def socket_fds() -> dict[int, str]:
    """Open socket descriptors of this process: fd -> ``socket:[inode]``."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # closed meanwhile (or the listing's own descriptor)
        if target.startswith("socket:"):
            found[int(name)] = target
    return found


@dataclass
class Snapshot:
    """Threads and sockets at one moment."""

    threads: set[threading.Thread] = field(default_factory=set)
    sockets: set[str] = field(default_factory=set)  # ``socket:[inode]``: unique while open

    @classmethod
    def now(cls) -> Snapshot:
        return cls(set(threading.enumerate()), set(socket_fds().values()))

    def __or__(self, other: Snapshot) -> Snapshot:
        return Snapshot(self.threads | other.threads, self.sockets | other.sockets)

    def __sub__(self, other: Snapshot) -> Snapshot:
        return Snapshot(self.threads - other.threads, self.sockets - other.sockets)


def _process_wide(thread: threading.Thread) -> bool:
    if any(thread.name.startswith(prefix) for prefix in PROCESS_WIDE_THREADS):
        return True
    return any(thread in set(owner.threads()) for owner in list(_owners))


def _owned_sockets() -> set[str]:
    fds = socket_fds()
    owned = set()
    for owner in list(_owners):
        for sock in owner.sockets():
            fd = _fd(sock)
            if fd in fds:
                owned.add(fds[fd])
    return owned


def leftovers(allowed: Snapshot, timeout: float = JOIN_TIMEOUT) -> Snapshot:
    """What exists now beyond ``allowed`` (and the process-wide), after joining new threads
    for up to ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    current = threading.current_thread()
    for thread in set(threading.enumerate()) - allowed.threads:
        if thread is not current and not _process_wide(thread):
            thread.join(max(0.0, deadline - time.monotonic()))
    while True:
        left = _leftovers(allowed)
        if not left.sockets or time.monotonic() > deadline:
            return left
        time.sleep(0.01)  # a socket its (joined) owner is closing right now


def _leftovers(allowed: Snapshot) -> Snapshot:
    now = Snapshot.now()
    threads = {t for t in now.threads - allowed.threads if t.is_alive() and not _process_wide(t)}
    sockets = now.sockets - allowed.sockets
    if sockets and _owners:
        sockets -= _owned_sockets()
    return Snapshot(threads, sockets)


def describe(left: Snapshot) -> str:
    threads = sorted(f"{t.name} (daemon={t.daemon})" for t in left.threads)
    sockets = sorted(left.sockets)
    return f"threads {threads}, sockets {sockets}"


def still_alive(created: Snapshot, timeout: float = JOIN_TIMEOUT) -> Snapshot:
    """Which of ``created`` still exist, after joining its threads for up to ``timeout``."""
    deadline = time.monotonic() + timeout
    for thread in created.threads:
        if thread is not threading.current_thread() and not _process_wide(thread):
            thread.join(max(0.0, deadline - time.monotonic()))
    while True:
        now = Snapshot.now()
        threads = {
            t for t in created.threads & now.threads if t.is_alive() and not _process_wide(t)
        }
        left = Snapshot(threads, (created.sockets & now.sockets) - _owned_sockets())
        if not left.sockets or time.monotonic() > deadline:
            return left
        time.sleep(0.01)
