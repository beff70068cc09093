"""os-simple-tenant-usage: hours and totals over a period, deleted servers included, as Nova
answers them (responses checked against Nova's and tempest's schemas by the conformance hook)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instances
from openkeel.domain.instances import InstanceUpdate
from tests.api.server_fakes import ADMIN, USER, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

FMT = "%Y-%m-%dT%H:%M:%S"


def _servers(api: ApiClient, services: ApiServices) -> tuple[str, str, datetime]:
    """Two servers of project demo: one launched 2 h ago and running, one launched 3 h ago
    and deleted 1 h ago (flavor 1: 1 vCPU, 512 MB, 1 GB)."""
    flavor(api)
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    running = create(api)["server"]["id"]
    place(services, running, launched_at=now - timedelta(hours=2))
    gone = create(api)["server"]["id"]
    place(services, gone, launched_at=now - timedelta(hours=3))
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.update(conn, gone, InstanceUpdate(terminated_at=now - timedelta(hours=1)))
        instances.soft_delete(conn, gone)
    return running, gone, now


def _query(start: datetime, end: datetime, **extra: str) -> str:
    params = "&".join(f"{k}={v}" for k, v in {"start": start.strftime(FMT), "end": end.strftime(FMT), **extra}.items())  # fmt: skip
    return params


@pytest.mark.parametrize("version", ["2.1", "2.40", "2.75"])
def test_usage_of_every_project_and_of_one(api: ApiClient, services: ApiServices, version: str) -> None:  # fmt: skip
    running, gone, now = _servers(api, services)
    window = _query(now - timedelta(hours=4), now - timedelta(minutes=30), detailed="1")
    resp = api.get(f"/v2.1/os-simple-tenant-usage?{window}", token=ADMIN, version=version)
    assert resp.status_code == 200, resp.text
    (usage,) = resp.json()["tenant_usages"]
    # running: 1.5 h of the window; gone: 2 h (launched 3 h ago, terminated 1 h ago)
    assert usage["tenant_id"] == "demo"
    assert usage["total_hours"] == pytest.approx(3.5)
    assert usage["total_vcpus_usage"] == pytest.approx(3.5)
    assert usage["total_memory_mb_usage"] == pytest.approx(3.5 * 512)
    servers = {s["instance_id"]: s for s in usage["server_usages"]}
    assert servers[gone]["state"] == "terminated" and servers[gone]["uptime"] == 7200
    assert servers[running]["state"] == "active" and servers[running]["ended_at"] is None
    assert servers[running]["flavor"] == "f1"
    period = _query(now - timedelta(hours=4), now - timedelta(minutes=30))
    mine = api.get(f"/v2.1/os-simple-tenant-usage/demo?{period}", token=USER, version=version)
    assert mine.status_code == 200, mine.text
    assert mine.json()["tenant_usage"]["total_hours"] == pytest.approx(3.5)


def test_usage_errors_and_policy(api: ApiClient, services: ApiServices) -> None:
    _servers(api, services)
    now = datetime.now(UTC).replace(tzinfo=None)
    backwards = _query(now, now - timedelta(hours=1))
    resp = api.get(f"/v2.1/os-simple-tenant-usage?{backwards}", token=ADMIN)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Invalid start time. The start time cannot occur after the end time."  # fmt: skip
    resp = api.get("/v2.1/os-simple-tenant-usage?start=yesterday", token=ADMIN)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == "Invalid datetime string: Datetime is in invalid format"  # fmt: skip
    assert api.get("/v2.1/os-simple-tenant-usage", token=USER).status_code == 403
    assert api.get("/v2.1/os-simple-tenant-usage/other", token=USER).status_code == 403
    empty = api.get(f"/v2.1/os-simple-tenant-usage/nobody?{_query(now - timedelta(days=1), now)}", token=ADMIN)  # fmt: skip
    assert empty.json() == {"tenant_usage": {}}


def test_paging_from_2_40(api: ApiClient, services: ApiServices) -> None:
    running, gone, now = _servers(api, services)
    window = _query(now - timedelta(hours=4), now, detailed="1", limit="1")
    first: Any = api.get(f"/v2.1/os-simple-tenant-usage?{window}", token=ADMIN, version="2.40").json()  # fmt: skip
    (page,) = first["tenant_usages"]
    (only,) = page["server_usages"]
    (link,) = first["tenant_usages_links"]
    assert link["rel"] == "next" and f"marker={only['instance_id']}" in link["href"]
    second = api.get(f"/v2.1/os-simple-tenant-usage?{window}&marker={only['instance_id']}", token=ADMIN, version="2.40").json()  # fmt: skip
    (rest,) = second["tenant_usages"][0]["server_usages"]
    assert {only["instance_id"], rest["instance_id"]} == {running, gone}
    bad = api.get(f"/v2.1/os-simple-tenant-usage?{window}&marker=nope", token=ADMIN, version="2.40")  # fmt: skip
    assert bad.status_code == 400
