"""``/os-availability-zone`` from cell services and aggregate zones, against Nova's samples."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from tests.client import ApiClient

SAMPLES = Path("/work/shared/spec/nova-api-samples/os-availability-zone")


def now() -> datetime.datetime:
    """Naive UTC now, taken when needed (a module-level one goes stale in a long run)."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _cell(services: ApiServices, tmp_path: Path) -> sa.Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    cell_tables.metadata.create_all(engine)
    services.cell_dbs["cell1"] = engine
    return engine


def _service(engine: sa.Engine, host: str, binary: str, **extra: Any) -> None:
    values = {"host": host, "binary": binary, "topic": binary.removeprefix("nova-"),
              "disabled": False, "forced_down": False, "deleted": 0, "report_count": 0,
              "last_seen_up": now(), **extra}  # fmt: skip
    with engine.begin() as conn:
        conn.execute(sa.insert(cell_tables.services).values(**values))


def _aggregate(services: ApiServices, name: str, zone: str, hosts: list[str]) -> None:
    with services.api_db.begin() as conn:
        key = conn.execute(
            sa.insert(api_tables.aggregates).values(uuid=name, name=name)
        ).inserted_primary_key
        assert key is not None
        agg_id = key[0]
        conn.execute(
            sa.insert(api_tables.aggregate_metadata).values(
                aggregate_id=agg_id, key="availability_zone", value=zone
            )
        )
        for host in hosts:
            conn.execute(
                sa.insert(api_tables.aggregate_hosts).values(aggregate_id=agg_id, host=host)
            )


def test_no_services_lists_nothing(api: ApiClient) -> None:
    for path in ("/v2.1/os-availability-zone", "/v2.1/os-availability-zone/detail"):
        resp = api.get(path)
        assert resp.status_code == 200
        assert resp.json() == {"availabilityZoneInfo": []}
    assert api.get("/v2.1/os-availability-zone", token="u1:p1").status_code == 200


def test_samples(api: ApiClient, services: ApiServices, tmp_path: Path) -> None:
    cell = _cell(services, tmp_path)
    _service(cell, "conductor", "nova-conductor")
    _service(cell, "scheduler", "nova-scheduler")
    _service(cell, "compute", "nova-compute")
    _service(cell, "api", "nova-osapi_compute", topic=None)
    listed = api.get("/v2.1/os-availability-zone", token="u1:p1").json()
    assert listed == json.loads((SAMPLES / "availability-zone-list-resp.json").read_text())
    detail = api.get("/v2.1/os-availability-zone/detail").json()
    assert detail == json.loads((SAMPLES / "availability-zone-detail-resp.json").read_text())


def test_aggregate_zones_disabled_and_down(
    api: ApiClient, services: ApiServices, tmp_path: Path
) -> None:
    cell = _cell(services, tmp_path)
    _service(cell, "c1", "nova-compute")
    _service(cell, "c2", "nova-compute", forced_down=True)
    _service(cell, "c3", "nova-compute", disabled=True)
    _service(cell, "c4", "nova-compute", last_seen_up=now() - datetime.timedelta(minutes=5))
    _aggregate(services, "a1", "az1", ["c1", "c2"])
    _aggregate(services, "a2", "az2", ["c3"])
    listed = api.get("/v2.1/os-availability-zone").json()["availabilityZoneInfo"]
    assert listed == [
        {"zoneName": "az1", "zoneState": {"available": True}, "hosts": None},
        {"zoneName": "nova", "zoneState": {"available": True}, "hosts": None},
        {"zoneName": "az2", "zoneState": {"available": False}, "hosts": None},
    ]
    detail = api.get("/v2.1/os-availability-zone/detail").json()["availabilityZoneInfo"]
    az1 = detail[0]["hosts"]
    assert az1["c1"]["nova-compute"]["available"] is True
    assert az1["c2"]["nova-compute"]["available"] is False
    assert detail[1]["hosts"]["c4"]["nova-compute"]["available"] is False
    assert detail[2] == {"zoneName": "az2", "zoneState": {"available": False}, "hosts": None}


def test_detail_is_admin_only_and_query_strict_from_2102(api: ApiClient) -> None:
    resp = api.get("/v2.1/os-availability-zone/detail", token="u1:p1")
    assert resp.status_code == 403
    assert resp.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed."
    )
    assert api.get("/v2.1/os-availability-zone?x=1", version="2.101").status_code == 200
    assert api.get("/v2.1/os-availability-zone?x=1", version="2.102").status_code == 400
