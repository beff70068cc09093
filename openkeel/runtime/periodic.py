"""A small periodic-task runner for the compute and conductor roles, driven by an injectable clock.

``PeriodicRunner.run_due()`` runs every task whose spacing has elapsed since its last run (tests
call it after advancing a ``FakeClock``); ``start()`` runs it on a background thread for real
services, waking every ``tick`` seconds. Tasks never run concurrently with themselves and a
failing task is logged and retried at its next due time, as oslo.service's periodic tasks do.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from openkeel import metrics
from openkeel.runtime.clock import Clock

LOG = logging.getLogger(__name__)

DEFAULT_SPACING = 60.0  # Nova's periodic tick: tasks without spacing run every 60 s


@dataclass
class PeriodicTask:
    """One task: ``spacing`` seconds between runs (negative: disabled)."""

    name: str
    function: Callable[[], object]
    spacing: float
    run_immediately: bool = False
    last_run: datetime.datetime | None = None

    @property
    def enabled(self) -> bool:
        return self.spacing >= 0

    def due(self, now: datetime.datetime) -> bool:
        if not self.enabled:
            return False
        if self.last_run is None:
            return self.run_immediately
        spacing = self.spacing or DEFAULT_SPACING
        return (now - self.last_run).total_seconds() >= spacing


class PeriodicRunner:
    """Runs registered tasks when due."""

    def __init__(self, clock: Clock, name: str = "compute-periodic") -> None:
        self.clock = clock
        self.name = name
        self.tasks: dict[str, PeriodicTask] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(
        self,
        name: str,
        function: Callable[[], object],
        spacing: float,
        *,
        run_immediately: bool = False,
    ) -> None:
        """Register a task; its first run is due after ``spacing`` (or at once)."""
        task = PeriodicTask(name, function, spacing, run_immediately)
        if not run_immediately:
            task.last_run = self.clock.now()
        self.tasks[name] = task

    def run_due(self) -> list[str]:
        """Run the due tasks (in registration order); returns their names."""
        with self._lock:
            now = self.clock.now()
            ran = []
            for task in self.tasks.values():
                if task.due(now):
                    task.last_run = now
                    self._run(task)
                    ran.append(task.name)
            return ran

    def run(self, name: str) -> None:
        """Run one task now, due or not (tests, operator triggers)."""
        with self._lock:
            task = self.tasks[name]
            task.last_run = self.clock.now()
            self._run(task)

    @staticmethod
    def _run(task: PeriodicTask) -> None:
        try:
            with metrics.timed_periodic_task(task.name):
                task.function()
        except Exception:
            LOG.exception("Periodic task %s failed", task.name)

    def start(self, tick: float = 1.0) -> None:
        """Run due tasks every ``tick`` seconds on a daemon thread until ``stop()``."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, args=(tick,), name=self.name, daemon=True
        )
        self._thread.start()

    def _loop(self, tick: float) -> None:
        while not self._stop.wait(tick):
            self.run_due()

    def stop(self) -> None:
        """Stop the background thread (waits for a running task to finish)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()


def start_busy(*runners: PeriodicRunner) -> None:
    """Start each runner that has tasks (a thread per runner: a role's heartbeat apart from
    its other periodic tasks)."""
    for runner in runners:
        if runner.tasks:
            runner.start()
