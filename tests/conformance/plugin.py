"""Pytest plugin: every response the ``api`` fixture's client returns is checked against Nova.

Loaded from tests/conftest.py (``pytest_plugins``). When the ``api`` fixture is set up, its
client's ``request`` is wrapped so each response goes through
:func:`tests.conformance.response_check.inspect`; a mismatch raises
:class:`ConformanceError` at the request that produced it. Mark a test
``@pytest.mark.nonconformant("why")`` to opt out. A summary line at the end of the session
counts what was checked and what Nova has no schema for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator
from typing import Any

import httpx
import pytest

from tests.conformance import response_check


class ConformanceError(AssertionError):
    """A response of our API that Nova (or tempest) would not have produced."""


class Tally:
    """Counts of checked and unchecked responses over the session."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.tempest = 0
        self.unchecked: Counter[str] = Counter()

    def add(self, report: response_check.Report) -> None:
        self.kinds[report.kind] += 1
        self.tempest += int(report.tempest)
        if report.kind == "unchecked":
            self.unchecked[report.label] += 1

    def summary(self) -> str:
        text = (
            f"conformance: {self.kinds['nova']} responses checked against Nova's schemas "
            f"({self.tempest} also against tempest's), {self.kinds['fault']} fault bodies, "
            f"{self.kinds['unchecked']} unchecked"
        )
        if self.unchecked:
            top = ", ".join(f"{label} x{n}" for label, n in self.unchecked.most_common(5))
            text += f" (most: {top})"
        return text


_TALLY_KEY = pytest.StashKey[Tally]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "nonconformant(reason): do not check this test's responses against Nova"
    )
    config.stash[_TALLY_KEY] = Tally()


def _wrap(client: Any, tally: Tally) -> None:
    original = client.request

    def checked(method: str, path: str, **kwargs: Any) -> httpx.Response:
        resp: httpx.Response = original(method, path, **kwargs)
        report = response_check.inspect(resp)
        tally.add(report)
        if report.errors:
            raise ConformanceError(
                f"{method} {resp.request.url} -> {resp.status_code} does not conform to Nova "
                f"34 ({report.label}):\n  " + "\n  ".join(report.errors)
            )
        return resp

    client.request = checked


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, None]:
    outcome = yield
    if fixturedef.argname != "api" or outcome.excinfo is not None:
        return
    if request.node.get_closest_marker("nonconformant") is not None:
        return
    client = outcome.get_result()
    if hasattr(client, "request"):
        _wrap(client, request.config.stash[_TALLY_KEY])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    tally = config.stash.get(_TALLY_KEY, None)
    if tally is not None and tally.kinds.total():
        terminalreporter.write_line(tally.summary())
