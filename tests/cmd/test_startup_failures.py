"""Start-up failures of ``openkeel all-in-one`` and the per-role commands, as an operator sees them.

Each case runs the real command as a subprocess and expects: a non-zero exit, exactly one line
on standard error saying what is wrong (no traceback) and no "listening" banner on standard
output. Two all-in-ones on one data directory: the second is refused while the first runs, and
the lock dies with the first even under ``kill -9``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cmd.processes import AllInOne, run_openkeel

BANNER = "compute API listening"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_refused(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """The one stderr line of a failed start, checked to contain ``fragments``."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, result
    assert BANNER not in result.stdout
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def _kubeconfig(tmp_path: Path, text: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    return str(path)


UNREACHABLE = """\
apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:PORT"}}]
users: [{name: u, user: {token: t}}]
"""
NO_PLUGIN = UNREACHABLE.replace(
    "{token: t}", "{exec: {apiVersion: client.authentication.k8s.io/v1, command: no-such-plugin-x}}"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "cannot read kubeconfig"),
        ("", "is empty"),
        ("{{{ not: yaml", "is not valid YAML"),
        ("- just\n- a list\n", "is not a kubeconfig"),
        ("apiVersion: v1\ncurrent-context: nope\n", "Expected object with name nope"),
        (UNREACHABLE, "is unreachable"),
        (NO_PLUGIN, "credential plugin 'no-such-plugin-x' of user 'u' is not installed"),
    ],
    ids=[
        "missing",
        "empty",
        "malformed",
        "not-a-mapping",
        "no-context",
        "unreachable",
        "no-plugin",
    ],
)
def test_bad_kubeconfig(tmp_path: Path, text: str | None, expected: str) -> None:
    if text is None:
        kubeconfig = str(tmp_path / "absent")
    else:
        kubeconfig = _kubeconfig(tmp_path, text.replace("PORT", str(_closed_port())))
    result = run_openkeel(
        "all-in-one", "--data-dir", str(tmp_path / "d"), "--port", "0", "--kubeconfig", kubeconfig
    )
    line = assert_refused(result, expected)
    assert kubeconfig in line


def test_bad_kubeconfig_from_config_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    conf = tmp_path / "nova.conf"
    conf.write_text(
        f"[DEFAULT]\ncompute_driver = kubevirt.KubevirtDriver\n[kubevirt]\nkubeconfig = {missing}\n"
    )
    result = run_openkeel(
        "all-in-one", "--data-dir", str(tmp_path / "d"), "--port", "0", "--config-file", str(conf)
    )
    assert_refused(result, f"cannot read kubeconfig {missing}")


def test_port_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_openkeel("all-in-one", "--data-dir", str(tmp_path), "--port", str(port))
    assert_refused(result, f"cannot listen on 127.0.0.1:{port}", "Address already in use")


def test_unreadable_config_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nova.conf")
    result = run_openkeel("all-in-one", "--data-dir", str(tmp_path), "--config-file", missing)
    assert_refused(result, f"cannot read configuration file {missing}")


def test_malformed_config_file(tmp_path: Path) -> None:
    conf = tmp_path / "nova.conf"
    conf.write_text("[DEFAULT\nhost = x\n")
    result = run_openkeel("all-in-one", "--data-dir", str(tmp_path), "--config-file", str(conf))
    assert_refused(result, "invalid configuration")


@pytest.fixture
def unprivileged() -> list[str]:
    """How to run a command as a user without write access (``nobody`` when we are root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    probe = [setpriv or "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if setpriv is None or subprocess.run([*probe, "true"], check=False).returncode != 0:
        pytest.skip("cannot drop privileges here (root ignores read-only modes)")
    return probe


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user can traverse (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="openkeel-ro-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    for item in [path, *path.rglob("*")]:
        item.chmod(0o755 if item.is_dir() else 0o644)
    shutil.rmtree(path)


def test_read_only_data_dir(unprivileged: list[str], shared_dir: Path) -> None:
    data = shared_dir / "data"
    data.mkdir()
    data.chmod(0o555)
    result = run_openkeel("all-in-one", "--data-dir", str(data), "--port", "0", prefix=unprivileged)
    assert_refused(result, f"data directory {data} is not writable", "Permission denied")


def test_read_only_database_in_data_dir(unprivileged: list[str], shared_dir: Path) -> None:
    data = shared_dir / "data"
    data.mkdir()
    data.chmod(0o777)
    (data / "nova_api.sqlite").write_bytes(b"")
    (data / "nova_api.sqlite").chmod(0o444)
    result = run_openkeel("all-in-one", "--data-dir", str(data), "--port", "0", prefix=unprivileged)
    assert_refused(result, f"data directory {data}: nova_api.sqlite is read-only")


def test_second_all_in_one_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    with AllInOne(tmp_path) as first:
        assert ":0/" not in first.url  # the banner names the port actually bound
        result = run_openkeel("all-in-one", "--data-dir", str(tmp_path), "--port", "0")
        assert_refused(result, f"data directory {tmp_path} is in use", f"(pid {first.process.pid})")
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()
    with AllInOne(tmp_path) as restarted:  # the lock died with the killed process
        assert restarted.url.startswith("http://127.0.0.1:")


def test_role_with_unreadable_config_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nova.conf")
    roles = ("api", "conductor", "scheduler", "compute", "metadata", "novncproxy", "serialproxy")
    for role in roles:
        result = run_openkeel(role, "--config-file", missing)
        assert_refused(result, f"cannot read configuration file {missing}")


def test_role_with_unreachable_database(tmp_path: Path) -> None:
    conf = tmp_path / "nova.conf"
    url = f"mysql+pymysql://root:secret@127.0.0.1:{_closed_port()}/nova_api"
    conf.write_text(f"[api_database]\nconnection = {url}\n[placement]\nendpoint_override = x\n")
    for role in ("api", "conductor", "metadata", "novncproxy"):
        result = run_openkeel(role, "--config-file", str(conf))
        line = assert_refused(result, "cannot connect to [api_database] connection")
        assert "secret" not in line


def test_main_module_runs(tmp_path: Path) -> None:
    """The helper runs the same entry point as the console script."""
    result = subprocess.run(
        [sys.executable, "-m", "openkeel.cmd.main", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and "all-in-one" in result.stdout
