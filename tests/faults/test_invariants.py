"""The invariant checker finds each breach it is meant to find, and nothing in a clean cloud."""

from __future__ import annotations

from typing import Any

import pytest

from tests.faults.invariants import CELL0, evaluate
from tests.faults.state import ApiState, DbState, Instance, Mapping

CELL1 = "c3e1a1f0-0000-4000-8000-00000000c311"
VM = "11111111-1111-4111-8111-111111111111"
OTHER = "22222222-2222-4222-8222-222222222222"
MIGRATION = "33333333-3333-4333-8333-333333333333"
ALLOCATION = {"node-1": {"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 1}}


def _instance(uuid: str = VM, **changes: Any) -> Instance:
    fields: dict[str, Any] = {
        "uuid": uuid, "cell": CELL1, "project": "p", "vm_state": "active", "task_state": None,
        "host": "host-1", "node": "node-1", "vcpus": 1, "memory_mb": 256, "deleted": False,
    }  # fmt: skip
    fields.update(changes)
    return Instance(**fields)


def _server(uuid: str = VM, **changes: Any) -> dict[str, Any]:
    server = {"id": uuid, "tenant_id": "p", "status": "ACTIVE", "OS-EXT-STS:task_state": None,
              "flavor": {"vcpus": 1, "ram": 256}}  # fmt: skip
    server.update(changes)
    return server


def _clean() -> tuple[DbState, ApiState]:
    """One ACTIVE server, mapped, with its allocation, counted once."""
    db = DbState(
        mappings={VM: Mapping(VM, CELL1, "p", False)},
        instances={VM: [_instance()]},
        allocations={VM: ALLOCATION},
    )
    used = {"instances": 1, "cores": 1, "ram": 256}
    api = ApiState(
        listed={VM: _server()},
        shown={VM: _server()},
        quota_in_use={"p": dict(used)},
        limits_used={"p": dict(used)},
    )
    return db, api


def _invariants(db: DbState, api: ApiState, expect_empty: bool = False) -> set[str]:
    return {f.invariant for f in evaluate(db, api, expect_empty=expect_empty).findings}


def test_a_clean_cloud_has_no_findings() -> None:
    db, api = _clean()
    assert evaluate(db, api).findings == []


def test_a_server_stuck_in_build() -> None:
    db, api = _clean()
    api.listed[VM] = _server(status="BUILD", **{"OS-EXT-STS:task_state": "scheduling"})
    db.instances[VM] = [_instance(vm_state="building", task_state="scheduling")]
    assert _invariants(db, api) == {"transitional"}


def test_a_build_request_left_behind() -> None:
    db, api = _clean()
    db.build_requests[OTHER] = "p"
    db.mappings[OTHER] = Mapping(OTHER, None, "p", False)
    api.listed[OTHER] = api.shown[OTHER] = _server(OTHER, status="BUILD")
    api.quota_in_use["p"] = api.limits_used["p"] = {"instances": 2, "cores": 2, "ram": 512}
    assert _invariants(db, api) == {"transitional"}


@pytest.mark.parametrize(
    "breach",
    [
        "cell row without mapping",
        "mapping without cell or build request",
        "mapping to a cell without the instance",
        "deleted instance, mapping not queued for delete",
        "build request of a mapped instance",
        "listed but 404",
    ],
)
def test_ghost_rows(breach: str) -> None:
    db, api = _clean()
    if breach == "cell row without mapping":
        del db.mappings[VM]
    elif breach == "mapping without cell or build request":
        db.mappings[OTHER] = Mapping(OTHER, None, "p", True)
    elif breach == "mapping to a cell without the instance":
        db.mappings[OTHER] = Mapping(OTHER, CELL1, "p", False)
    elif breach == "deleted instance, mapping not queued for delete":
        db.mappings[OTHER] = Mapping(OTHER, CELL1, "p", False)
        db.instances[OTHER] = [_instance(OTHER, deleted=True)]
    elif breach == "build request of a mapped instance":
        db.build_requests[VM] = "p"
    else:
        api.shown[VM] = None
    assert "ghost" in _invariants(db, api)


def test_a_deleted_server_keeps_its_flagged_mapping_without_being_a_ghost() -> None:
    db, api = _clean()
    db.mappings[OTHER] = Mapping(OTHER, CELL1, "p", True)
    db.instances[OTHER] = [_instance(OTHER, deleted=True, vm_state="deleted")]
    assert evaluate(db, api).findings == []


@pytest.mark.parametrize(
    "breach",
    [
        "deleted consumer",
        "missing allocation",
        "wrong amount",
        "cell0",
        "stale migration",
        "empty consumer",
    ],
)
def test_orphan_allocations(breach: str) -> None:
    db, api = _clean()
    if breach == "deleted consumer":
        db.allocations[OTHER] = ALLOCATION
    elif breach == "missing allocation":
        del db.allocations[VM]
    elif breach == "wrong amount":
        db.allocations[VM] = {"node-1": {"VCPU": 2, "MEMORY_MB": 384}}
    elif breach == "cell0":
        db.instances[VM] = [_instance(cell=CELL0, vm_state="error", host=None)]
        db.mappings[VM] = Mapping(VM, CELL0, "p", False)
        api.shown[VM] = api.listed[VM] = _server(status="ERROR", fault={"message": "x"})
    elif breach == "stale migration":
        db.migrations[MIGRATION] = (VM, "error")
        db.allocations[MIGRATION] = ALLOCATION
    else:
        db.empty_consumers.add(OTHER)
    assert "orphan-allocation" in _invariants(db, api)


def test_a_migration_holds_the_source_while_waiting_for_confirmation() -> None:
    db, api = _clean()
    db.instances[VM] = [_instance(vm_state="resized")]
    db.migrations[MIGRATION] = (VM, "finished")
    db.allocations[MIGRATION] = ALLOCATION
    api.listed[VM] = api.shown[VM] = _server(status="VERIFY_RESIZE")
    assert evaluate(db, api).findings == []


def test_a_migration_stuck_before_it_finished() -> None:
    db, api = _clean()
    db.migrations[MIGRATION] = (VM, "pre-migrating")
    assert _invariants(db, api) == {"transitional"}


def test_quota_usage_counting_a_server_that_does_not_exist() -> None:
    db, api = _clean()
    api.quota_in_use["p"] = {"instances": 2, "cores": 2, "ram": 512}
    assert _invariants(db, api) == {"quota"}


def test_an_error_server_without_a_fault() -> None:
    db, api = _clean()
    db.instances[VM] = [_instance(vm_state="error")]
    api.listed[VM] = api.shown[VM] = _server(status="ERROR")
    assert _invariants(db, api) == {"fault"}


def test_anything_left_after_deleting_everything() -> None:
    db, api = _clean()
    assert _invariants(db, api, expect_empty=True) == {"leftover"}
