"""Running ``openkeel`` commands as subprocesses for the tests of tests/cmd."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

START_TIMEOUT = 60.0


def openkeel_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "openkeel.cmd.main", *args]


def run_openkeel(
    *args: str, prefix: list[str] | None = None, timeout: float = START_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run one ``openkeel`` command to its end (it is expected to fail fast)."""
    return subprocess.run(
        [*(prefix or []), *openkeel_command(*args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


class AllInOne:
    """``openkeel all-in-one --port 0`` on ``data_dir`` until the block ends; ``url`` is what
    its banner announced."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.url = ""
        self.process = subprocess.Popen(
            openkeel_command("all-in-one", "--data-dir", str(data_dir), "--port", "0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def __enter__(self) -> AllInOne:
        try:
            self.url = self._banner_url(time.monotonic() + START_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _banner_url(self, deadline: float) -> str:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.process.stdout.readline()
                if not line:
                    break
                if "compute API listening on " in line:
                    return line.rsplit(" ", 1)[-1].strip()
        raise AssertionError(f"no banner from the all-in-one (exit code {self.process.poll()})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
