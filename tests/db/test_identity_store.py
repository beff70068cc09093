"""The identity store on SQLite, PostgreSQL and MariaDB: names unique per domain, grants
idempotent, deletes take assignments along, passwords hashed, keys and revocations kept."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator

import pytest

from openkeel.db.engine import make_engine
from openkeel.db.identity_store import (
    SYSTEM_TARGET,
    IdentityConflict,
    IdentityNotFound,
    IdentityStore,
)


@pytest.fixture
def store(db_url: str) -> Iterator[IdentityStore]:
    engine = make_engine(db_url)
    made = IdentityStore(engine)
    made.install()
    made.install()  # idempotent
    yield made
    engine.dispose()


def test_records_and_uniqueness(store: IdentityStore) -> None:
    project = store.create_project("p1", description="d", tags=["t"])
    assert store.get_project(project.id) == project and project.tags == ("t",)
    with pytest.raises(IdentityConflict, match="Duplicate entry found with name p1"):
        store.create_project("p1")
    user = store.create_user("u1", password="pw", extra={"email": "u@example.org"})
    assert user.has_password and user.extra == {"email": "u@example.org"}
    assert store.check_password(user.id, "pw") and not store.check_password(user.id, "PW")
    with pytest.raises(IdentityConflict):
        store.create_user("u1")
    other = store.create_user("u2")
    with pytest.raises(IdentityConflict):
        store.update_user(other.id, {"name": "u1"})
    store.create_role("r1")
    with pytest.raises(IdentityConflict):
        store.create_role("r1")
    with pytest.raises(IdentityNotFound, match=r"Could not find project: nope\."):
        store.get_project("nope")
    with pytest.raises(IdentityNotFound):
        store.update_project("nope", {"name": "x"})


def test_grants_and_cascading_deletes(store: IdentityStore) -> None:
    project = store.create_project("p")
    user = store.create_user("u")
    role = store.create_role("r")
    store.grant(user.id, project.id, role.id)
    store.grant(user.id, project.id, role.id)  # idempotent
    store.grant(user.id, SYSTEM_TARGET, role.id)
    assert [r.name for r in store.roles_on(user.id, project.id)] == ["r"]
    assert len(store.assignments(user_id=user.id)) == 2
    store.delete_project(project.id)
    assert [a.target_id for a in store.assignments(user_id=user.id)] == [SYSTEM_TARGET]
    store.delete_role(role.id)
    assert store.assignments(user_id=user.id) == []
    assert not store.revoke(user.id, SYSTEM_TARGET, role.id)
    store.delete_user(user.id)
    with pytest.raises(IdentityNotFound):
        store.delete_user(user.id)


def test_password_change_and_disabling_invalidate_older_tokens(store: IdentityStore) -> None:
    user = store.create_user("u", password="a")
    assert user.tokens_valid_after is None
    changed = store.update_user(user.id, {"password": "b"})
    assert changed.tokens_valid_after is not None
    assert store.check_password(user.id, "b")
    disabled = store.update_user(user.id, {"enabled": False})
    assert disabled.tokens_valid_after is not None
    assert disabled.tokens_valid_after >= changed.tokens_valid_after


def test_keys_are_made_once_even_when_processes_race(store: IdentityStore) -> None:
    seen: list[list[str]] = []
    threads = [threading.Thread(target=lambda: seen.append(store.token_keys())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Every caller got a usable list; all keys any caller saw are kept.
    assert all(keys for keys in seen)
    assert {k for keys in seen for k in keys} <= set(store.token_keys())


def test_revocations_are_kept_until_expiry(store: IdentityStore) -> None:
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    store.revoke_token("audit-1", now + datetime.timedelta(hours=1))
    store.revoke_token("audit-1", now + datetime.timedelta(hours=1))  # twice is fine
    store.revoke_token("audit-old", now - datetime.timedelta(hours=1))
    assert store.is_revoked("audit-1")
    store.revoke_token("audit-2", now + datetime.timedelta(hours=1))  # prunes expired rows
    assert not store.is_revoked("audit-old")
