"""The quota engine: limit resolution, drivers, usage counting, check and claim (SQLite)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import QuotaEngine, effective_limit
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.errors import NotImplementedYet
from openkeel.domain.quotas import RESOURCES, QuotaExceeded
from tests.conftest import make_services

NOVA_DEFAULTS = {
    "cores": 20,
    "fixed_ips": -1,
    "floating_ips": -1,
    "injected_file_content_bytes": 10240,
    "injected_file_path_bytes": 255,
    "injected_files": 5,
    "instances": 10,
    "key_pairs": 100,
    "metadata_items": 128,
    "ram": 51200,
    "security_group_rules": -1,
    "security_groups": -1,
    "server_group_members": 10,
    "server_groups": 10,
}


def _add_keypair(conn: sa.Connection, user_id: str, name: str) -> None:
    conn.execute(sa.insert(api_tables.key_pairs).values(name=name, user_id=user_id, type="ssh"))


def test_defaults_match_nova(services: ApiServices) -> None:
    assert QuotaEngine(services).defaults() == NOVA_DEFAULTS
    assert tuple(sorted(NOVA_DEFAULTS)) == RESOURCES


def test_resolution_order_user_project_class_config(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    assert effective_limit(services, "p1", "u1", "instances") == 10
    engine.set_class_limits("default", {"instances": 7})
    assert effective_limit(services, "p1", "u1", "instances") == 7
    engine.set_limits("p1", None, {"instances": 5})
    assert effective_limit(services, "p1", "u1", "instances") == 5
    assert effective_limit(services, "p2", "u1", "instances") == 7
    engine.set_limits("p1", "u1", {"instances": 3})
    assert effective_limit(services, "p1", "u1", "instances") == 3
    assert effective_limit(services, "p1", "u2", "instances") == 5
    assert effective_limit(services, "p1", None, "instances") == 5
    engine.delete_limits("p1", "u1")
    assert effective_limit(services, "p1", "u1", "instances") == 5
    engine.delete_limits("p1")
    assert effective_limit(services, "p1", "u1", "instances") == 7


def test_other_classes_do_not_apply_to_projects(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    engine.set_class_limits("gold", {"cores": 99})
    assert engine.class_limits("gold")["cores"] == 99
    assert engine.limits("p1")["cores"] == 20


def test_per_user_counted_limit_is_the_stricter(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"key_pairs": 2})
    engine.set_limits("p1", "u1", {"key_pairs": 50})
    assert effective_limit(services, "p1", "u1", "key_pairs") == 2


def test_noop_driver_is_unlimited(tmp_path: Path) -> None:
    services = make_services(tmp_path, **{"quota.driver": "nova.quota.NoopQuotaDriver"})
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"instances": 1})
    assert engine.limits("p1") == dict.fromkeys(RESOURCES, -1)
    assert engine.details("p1")["instances"].reserved == -1
    engine.check("p1", "u1", {"key_pairs": 10_000})


def test_unified_limits_driver_is_refused(tmp_path: Path) -> None:
    services = make_services(tmp_path, **{"quota.driver": "nova.quota.UnifiedLimitsDriver"})
    with pytest.raises(NotImplementedYet, match="not supported"):
        QuotaEngine(services)


def test_key_pairs_counted_per_user_and_checked(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"key_pairs": 1})
    with services.api_db.begin() as conn:
        _add_keypair(conn, "u1", "k1")
    assert engine.count_usage("p1", "u1", {"key_pairs"}).user == {"key_pairs": 1}
    engine.check("p1", "u2", {"key_pairs": 1})
    with pytest.raises(QuotaExceeded) as caught:
        engine.check("p1", "u1", {"key_pairs": 1})
    assert caught.value.overs == ["key_pairs"] and caught.value.code == 403
    assert caught.value.message == "Quota exceeded for resources: ['key_pairs']"
    # Nova shows 0 usage for per-user resources in quota details.
    assert engine.details("p1", "u1")["key_pairs"].in_use == 0


def test_instances_counted_from_cells(tmp_path: Path) -> None:
    services = make_services(tmp_path)
    cell = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    cell_tables.metadata.create_all(cell)
    services.cell_dbs["cell1"] = cell
    base = {"project_id": "p1", "user_id": "u1", "vm_state": "active", "deleted": 0}
    rows = [
        {**base, "uuid": "a", "vcpus": 2, "memory_mb": 512},
        {**base, "uuid": "b", "user_id": "u2", "vcpus": 1, "memory_mb": 256},
        {**base, "uuid": "c", "vcpus": 4, "memory_mb": 1, "vm_state": "soft-delete"},
        {**base, "uuid": "d", "vcpus": 8, "memory_mb": 1, "deleted": 4},
    ]
    with cell.begin() as conn:
        conn.execute(sa.insert(cell_tables.instances), rows)
    counted = QuotaEngine(services).count_usage("p1", "u1", {"instances", "cores", "ram"})
    assert counted.project == {"instances": 2, "cores": 3, "ram": 768}
    assert counted.user == {"instances": 1, "cores": 2, "ram": 512}
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"cores": 4})
    with pytest.raises(QuotaExceeded) as caught:
        engine.check("p1", "u1", {"instances": 1, "cores": 2, "ram": 1})
    assert caught.value.scope == "project" and caught.value.overs == ["cores"]


def test_no_cells_count_zero(services: ApiServices) -> None:
    assert QuotaEngine(services).usages("p1")["instances"] == 0


def test_settable_ranges(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"instances": 20})
    engine.set_limits("p1", "u1", {"instances": 5})
    engine.set_limits("p1", "u2", {"instances": 5})
    assert engine.settable("p1")["instances"].minimum == 10
    assert engine.settable("p1", "u1")["instances"].maximum == 15
    assert engine.settable("p1", "u3")["instances"].maximum == 10


def test_claim_rolls_back_on_error(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    with pytest.raises(RuntimeError), engine.claim("p1", "u1", {"key_pairs": 1}) as conn:
        _add_keypair(conn, "u1", "k1")
        raise RuntimeError("boom")
    assert engine.count_usage("p1", "u1", {"key_pairs"}).user == {"key_pairs": 0}


def test_two_threads_race_for_the_last_key_pair(services: ApiServices) -> None:
    engine = QuotaEngine(services)
    engine.set_limits("p1", None, {"key_pairs": 1})
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def take(name: str) -> None:
        barrier.wait()
        try:
            with QuotaEngine(services).claim("p1", "u1", {"key_pairs": 1}) as conn:
                _add_keypair(conn, "u1", name)
            outcomes.append("won")
        except QuotaExceeded:
            outcomes.append("over")

    threads = [threading.Thread(target=take, args=(f"k{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["over", "won"]
    assert engine.count_usage("p1", "u1", {"key_pairs"}).user == {"key_pairs": 1}
