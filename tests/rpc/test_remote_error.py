"""A failure of a class the caller does not know (``RemoteError``) says what failed.

The wire round trip is ``describe`` on the server side and ``rebuild`` on the caller's; the fault
an instance records from such an error (``fault_fields``) must name the remote class and carry
its message, not the bare word ``RemoteError``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.db.records import fault_fields
from openkeel.rpc import errors
from openkeel.rpc.message import describe


def _over_the_wire(exc: BaseException) -> BaseException:
    failure = describe(exc)
    return errors.rebuild(failure["cls"], failure["message"])


def _readonly_write_error(tmp_path: Path) -> sa.exc.OperationalError:
    path = tmp_path / "store.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x INTEGER)").connection.commit()
    engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        with engine.begin() as conn, pytest.raises(sa.exc.OperationalError) as raised:
            conn.execute(sa.text("INSERT INTO t VALUES (1)"))
    finally:
        engine.dispose()
    return raised.value


def test_fault_of_remote_error_names_class_and_message(tmp_path: Path) -> None:
    remote = _over_the_wire(_readonly_write_error(tmp_path))
    assert isinstance(remote, errors.RemoteError)
    code, message, details = fault_fields(remote)
    assert code == 500
    assert message.startswith("OperationalError: ")
    assert "attempt to write a readonly database" in message
    # The SQL statement stays out of the message every user sees; admins get it in details.
    assert "INSERT" not in message
    assert "INSERT INTO t" in details


def test_remote_error_passed_on_keeps_the_original() -> None:
    first = _over_the_wire(KeyError("gone"))
    second = _over_the_wire(first)
    assert isinstance(second, errors.RemoteError)
    assert (second.exc_type, second.value) == ("KeyError", "'gone'")
    assert second.message == "KeyError: 'gone'"


def test_message_hides_credentials_and_keeps_one_line() -> None:
    remote = errors.RemoteError(
        "OperationalError", "cannot reach mysql+pymysql://nova:s3cret@db/nova\nsecond line"
    )
    assert remote.message == "OperationalError: cannot reach mysql+pymysql://nova:***@db/nova"


def test_message_of_an_empty_remote_error_is_its_class() -> None:
    assert errors.RemoteError("TimeoutError", "").message == "TimeoutError"
