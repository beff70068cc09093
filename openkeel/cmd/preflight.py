"""Start-up checks of the composition roots: what a role needs, checked before it announces itself.

Used by ``openkeel all-in-one`` and the per-role entry points (``openkeel api|conductor|
scheduler|compute``). Each check raises :class:`StartupError` whose message is the one line the
operator sees: ``openkeel.cmd.main`` prints it on standard error and exits 1, without a
traceback (the exception and its cause are logged at debug level there). :func:`starting` turns anything else that fails
while roles start into the same kind of line.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import sqlalchemy as sa
import yaml
from oslo_config import cfg

from openkeel.conf import make_config
from openkeel.db.engine import make_engine
from openkeel.rpc.errors import remote_summary

if TYPE_CHECKING:
    from openkeel.virt.kubevirt.client import KubeConfig

LOCK_FILE = "openkeel.lock"
# Files of the embedded default that must stay writable (SQLite databases and their journals).
STORE_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal")


class StartupError(Exception):
    """A role cannot start; ``str()`` is the one line shown to the operator."""


def one_line(exc: BaseException) -> str:
    """``"<class>: <first line of the message>"`` of ``exc``, credentials in URLs masked."""
    return remote_summary(type(exc).__name__, str(exc))


@contextlib.contextmanager
def starting(what: str) -> Iterator[None]:
    """Turn any failure of the block into a ``StartupError`` naming ``what`` failed."""
    try:
        yield
    except StartupError:
        raise
    except Exception as exc:
        raise StartupError(f"{what} failed: {one_line(exc)}") from exc


# --- configuration ---------------------------------------------------------------------------


def load_config(
    config_files: Sequence[str],
    overrides: Mapping[str, object] | None = None,
    defaults: Mapping[str, object] | None = None,
) -> cfg.ConfigOpts:
    """The configuration from ``config_files``; unreadable or malformed files are one line."""
    for name in config_files:
        try:
            with open(name, "rb"):
                pass
        except OSError as exc:
            raise StartupError(f"cannot read configuration file {name}: {exc.strerror}") from exc
    try:
        return make_config(
            config_files=config_files,
            overrides=dict(overrides or {}),
            defaults=dict(defaults or {}),
        )
    except cfg.Error as exc:
        raise StartupError(f"invalid configuration: {one_line(exc)}") from exc


# --- the all-in-one's data directory ----------------------------------------------------------


def prepare_data_dir(root: Path) -> None:
    """Create ``root`` if needed and check that it and its databases are writable."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StartupError(f"cannot create data directory {root}: {exc.strerror}") from exc
    try:
        with tempfile.TemporaryFile(dir=root, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise StartupError(f"data directory {root} is not writable: {exc.strerror}") from exc
    for path in sorted(root.iterdir()):
        if path.name.endswith(STORE_SUFFIXES) and not os.access(path, os.R_OK | os.W_OK):
            raise StartupError(f"data directory {root}: {path.name} is read-only")


class DataDirLock:
    """An exclusive ``flock`` on ``<root>/openkeel.lock``, held while the process lives.

    The kernel drops it when the process ends however it ends (``kill -9`` included), so a
    restart after a crash takes it again; the file keeps the holder's pid for the message.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> DataDirLock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StartupError(f"cannot lock data directory {self.root}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise StartupError(
                    f"cannot lock data directory {self.root}: {exc.strerror}"
                ) from exc
            raise StartupError(
                f"data directory {self.root} is in use by another OpenKeel all-in-one"
                f" (pid {holder}); stop it or choose another --data-dir"
            ) from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None

    def __enter__(self) -> DataDirLock:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_pid(fd: int) -> str:
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return text if text.isdigit() else "unknown"


# --- Kubernetes --------------------------------------------------------------------------------


def check_kubeconfig(path: str | None, timeout: float = 10.0, context: str | None = None) -> None:
    """The kubeconfig at ``path`` (a ':' list of files is merged; in-cluster when empty)
    loads and its API server lists Nodes."""
    from openkeel.virt.kubevirt.client import NODES, KubeClient, KubeError

    where = f"kubeconfig {path}" if path else "in-cluster Kubernetes configuration"
    config = _load_kubeconfig(path, where, context)
    try:
        client = KubeClient(config, timeout=timeout)
    except (OSError, ValueError) as exc:
        raise StartupError(f"{where}: cannot load its TLS files: {one_line(exc)}") from exc
    try:
        client.request("GET", NODES.path(None), params={"limit": "1"})
    except KubeError as exc:
        if exc.status == 0:
            raise StartupError(
                f"Kubernetes API server {config.server} ({where}) is unreachable: {exc.message}"
            ) from exc
        raise StartupError(
            f"Kubernetes API server {config.server} ({where}) refused to list nodes:"
            f" {exc.status} {exc.reason} {exc.message}".rstrip()
        ) from exc
    finally:
        client.close()


def _load_kubeconfig(path: str | None, where: str, context: str | None = None) -> KubeConfig:
    from openkeel.virt.kubevirt.client import KubeConfig, KubeError

    for one in (path or "").split(os.pathsep):
        if not one:
            continue
        here = f"kubeconfig {one}"
        try:
            text = Path(one).read_text()
        except OSError as exc:
            raise StartupError(f"cannot read {here}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise StartupError(f"{here} is not a text file") from exc
        _check_kubeconfig_text(text, here)
    try:
        return KubeConfig.load(path, context)
    except OSError as exc:
        raise StartupError(f"cannot read {where}: {exc.strerror} ({exc.filename})") from exc
    except KubeError as exc:
        raise StartupError(f"{where}: {exc.message}") from exc
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise StartupError(f"{where} is malformed: {one_line(exc)}") from exc


def _check_kubeconfig_text(text: str, where: str) -> None:
    if not text.strip():
        raise StartupError(f"{where} is empty")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or one_line(exc)
        raise StartupError(f"{where} is not valid YAML: {problem}{at}") from exc
    if not isinstance(doc, dict):
        raise StartupError(f"{where} is not a kubeconfig (no mapping at the top)")
    # An exec plugin that is not installed, an auth-provider the loader ignores: refused by
    # KubeConfig.load for the user of the chosen context only (others may be unusable here).


# --- databases and the listening socket ------------------------------------------------------


def check_database(engine: sa.Engine, what: str) -> None:
    """One round trip to ``engine``; ``what`` names it in the message."""
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except Exception as exc:
        url = engine.url.render_as_string(hide_password=True)
        reason = getattr(exc, "orig", None) or exc
        raise StartupError(f"cannot connect to {what} ({url}): {one_line(reason)}") from exc


def connected_engine(url: str, what: str) -> sa.Engine:
    """An engine for ``url`` that has answered once."""
    try:
        engine = make_engine(url)
    except Exception as exc:
        raise StartupError(f"invalid {what} URL: {one_line(exc)}") from exc
    check_database(engine, what)
    return engine


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (bound before anything is announced)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock
