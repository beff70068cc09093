"""The test-database helpers skip locally but fail in CI when a server is down."""

from __future__ import annotations

import pytest

from tests.db.backends import SERVERS, Server, probe, unavailable

NOWHERE = Server("postgresql", "PostgreSQL", "127.0.0.1", 9, "postgresql://postgres", "postgres")


def test_probe_reports_an_unreachable_server() -> None:
    assert probe(NOWHERE) is not None


def test_unreachable_server_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"start it \(see README\) or run in CI"):
        unavailable(SERVERS["postgresql"])


def test_unreachable_server_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"MariaDB not reachable at 127\.0\.0\.1:3306"):
        unavailable(SERVERS["mariadb"])
