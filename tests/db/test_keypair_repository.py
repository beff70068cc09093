"""KeyPairRepository on SQLite, PostgreSQL and MariaDB: CRUD, per-user uniqueness, paging
with a marker in one query, and the quota figures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories.keypairs import KeyPairQuotaFigures, KeyPairRepository, NewKeyPair
from openkeel.db.schema import api as api_schema
from openkeel.domain.errors import Conflict
from openkeel.domain.keypairs import KeyPair


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def repo(engine: sa.Engine) -> KeyPairRepository:
    return KeyPairRepository(engine)


def _new(name: str, user: str = "u1", key_type: str = "ssh") -> NewKeyPair:
    return NewKeyPair(name, user, key_type, f"ssh-rsa AAAA {name}", "aa:bb")


def _names(found: list[KeyPair] | None) -> list[str] | None:
    return None if found is None else [k.name for k in found]


def test_create_get_delete(repo: KeyPairRepository) -> None:
    created = repo.create(_new("k1", key_type="x509"))
    assert created.id > 0 and created.type == "x509" and created.created_at is not None
    got = repo.get("u1", "k1")
    assert got is not None
    assert (got.id, got.name, got.user_id, got.type) == (created.id, "k1", "u1", "x509")
    assert (got.public_key, got.fingerprint, got.updated_at) == ("ssh-rsa AAAA k1", "aa:bb", None)
    assert got.created_at is not None
    assert abs((got.created_at - created.created_at).total_seconds()) < 1.01
    assert repo.get("u2", "k1") is None
    assert repo.delete("u2", "k1") is False
    assert repo.delete("u1", "k1") is True
    assert repo.get("u1", "k1") is None
    assert repo.delete("u1", "k1") is False


def test_names_are_unique_per_user(repo: KeyPairRepository) -> None:
    repo.create(_new("same"))
    with pytest.raises(Conflict) as caught:
        repo.create(_new("same"))
    assert caught.value.message == "Key pair 'same' already exists."
    assert repo.create(_new("same", user="u2")).user_id == "u2"
    assert repo.count("u1") == 1 and repo.count("u2") == 1 and repo.count("u3") == 0


def test_list_pages_by_name(repo: KeyPairRepository) -> None:
    for name in ("c", "a", "d", "b"):
        repo.create(_new(name))
    repo.create(_new("bb", user="u2"))
    assert _names(repo.list("u1")) == ["a", "b", "c", "d"]
    assert _names(repo.list("u1", limit=2)) == ["a", "b"]
    assert _names(repo.list("u1", limit=2, marker="b")) == ["c", "d"]
    assert _names(repo.list("u1", limit=0, marker="b")) == []
    assert _names(repo.list("u1", marker="d")) == []
    assert _names(repo.list("u1", limit=0)) == []
    assert repo.list("u1", marker="bb") is None  # another user's name is no marker
    assert repo.list("u1", marker="zz") is None
    assert repo.list("u3") == []


def test_quota_figures(repo: KeyPairRepository, engine: sa.Engine) -> None:
    empty = repo.quota_figures("u1", "p1", "u1", "key_pairs")
    assert empty == KeyPairQuotaFigures(0, None, None, None)
    repo.create(_new("k1"))
    repo.create(_new("k2"))
    repo.create(_new("k3", user="u2"))
    with engine.begin() as conn:
        conn.execute(
            api_schema.quota_classes.insert(),
            [
                {"class_name": "default", "resource": "key_pairs", "hard_limit": 7},
                {"class_name": "default", "resource": "instances", "hard_limit": 1},
                {"class_name": "gold", "resource": "key_pairs", "hard_limit": 99},
            ],
        )
        conn.execute(
            api_schema.quotas.insert(),
            [
                {"project_id": "p1", "resource": "key_pairs", "hard_limit": 5},
                {"project_id": "p2", "resource": "key_pairs", "hard_limit": 50},
            ],
        )
        conn.execute(
            api_schema.project_user_quotas.insert(),
            [
                {"project_id": "p1", "user_id": "admin", "resource": "key_pairs", "hard_limit": 3},
                {"project_id": "p2", "user_id": "admin", "resource": "key_pairs", "hard_limit": 30},
            ],
        )
    # Counts the owner's keys; limits are the caller's (project p1, user admin).
    assert repo.quota_figures("u1", "p1", "admin", "key_pairs") == KeyPairQuotaFigures(2, 3, 5, 7)
    assert repo.quota_figures("u2", "p3", "u2", "key_pairs") == KeyPairQuotaFigures(
        1, None, None, 7
    )
