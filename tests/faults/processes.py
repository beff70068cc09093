"""OpenKeel processes the fault scenarios start, kill -9 and start again.

Each :class:`Process` appends to one log across its lives (a ``==== start N`` line marks each),
so a failure message can quote what every life logged. Only processes started here are ever
signalled, by their own pid.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}
NOTABLE = re.compile(r"ERROR|CRITICAL|Traceback|Error:|Exception|NotFound|[Ff]ailed")


@dataclass
class Process:
    """One ``python -m openkeel.cmd.main <argv>`` that may be killed and started again."""

    name: str
    argv: list[str]
    log_path: Path
    lives: int = 0
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        self.lives += 1
        self._log = self.log_path.open("ab")
        self._log.write(f"==== start {self.lives} of {self.name}\n".encode())
        self._log.flush()
        command = [sys.executable, "-m", "openkeel.cmd.main", *self.argv]
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=ENV)

    def kill(self) -> None:
        """kill -9: no cleanup of any kind runs in the process."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self._close_log()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 20 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_log()

    def exited(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def notable_lines(self, limit: int = 25) -> list[str]:
        """Distinct error-looking lines of every life (numbers and uuids folded)."""
        if not self.log_path.exists():
            return []
        seen: dict[str, str] = {}
        for line in self.log_path.read_text(errors="replace").splitlines():
            if NOTABLE.search(line):
                key = re.sub(r"[0-9a-f-]{36}|\d+", "#", line[24:])
                seen.setdefault(key, line.strip()[:300])
        return list(seen.values())[:limit]

    def wait_ready(self, marker: str, timeout: float = 90) -> None:
        """Poll this life's log for ``marker``; fail at once if the process exits first."""
        deadline = time.monotonic() + timeout
        while True:
            life = self.log_path.read_text(errors="replace").rsplit("==== start", 1)[-1]
            if marker in life:
                return
            if self.exited() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.name} did not start again (life {self.lives}, exit {self.exited()}):"
                    f" {life[-3000:]}"
                )
            time.sleep(0.1)  # polling a process we started, bounded by the deadline

    def lines_about(self, subject: str, limit: int = 8) -> list[str]:
        """The log lines naming ``subject`` (a uuid), with the life they belong to."""
        if not self.log_path.exists() or len(subject) < 8:
            return []
        found, life = [], "?"
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("==== start"):
                life = line.split()[2]
            elif subject in line:
                found.append(f"[life {life}] {line.strip()[:300]}")
        return found[:limit]


def wait_http(url: str, processes: Iterable[Process], timeout: float = 90) -> None:
    """Poll ``url`` until it answers; fail at once when one of ``processes`` has exited."""
    deadline = time.monotonic() + timeout
    watched = list(processes)
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            dead = [p.name for p in watched if p.exited() is not None]
            if dead or time.monotonic() > deadline:
                tails = {p.name: p.log_path.read_text(errors="replace")[-1500:] for p in watched}
                raise AssertionError(f"{url} never answered (exited: {dead}): {tails}") from None
            time.sleep(0.1)  # polling processes we started, bounded by the deadline


def all_in_one(data_dir: Path, port: int, config: Path) -> Process:
    argv = ["all-in-one", "--data-dir", str(data_dir), "--port", str(port)]
    return Process("all-in-one", [*argv, "--config-file", str(config)], data_dir / "aio.log")


def role(name: str, config: Path, logs: Path) -> Process:
    return Process(name, [name, "--config-file", str(config)], logs / f"{name}.log")


def nova_conf(path: Path, **sections: dict[str, str]) -> Path:
    lines = []
    for section, values in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path
