"""/servers/{server_id}/ips and /ips/{network_label}: addresses by network label from the
server's network info cache (fixed IPs, then floating ones), Nova's 404 messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_mappings, instances
from openkeel.domain.instances import FlavorSnapshot, Instance
from tests.client import ApiClient
from tests.conformance.sample_catalog import load
from tests.conformance.test_samples import shape_diff
from tests.conftest import CELL1_UUID

SERVER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
BASE = f"/v2.1/servers/{SERVER}/ips"
USER = "demo:demo"
FLAVOR = FlavorSnapshot(flavorid="1", name="tiny", memory_mb=512, vcpus=1, root_gb=1)


def _ip(address: str, version: int = 4, floating: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "address": address,
        "type": "fixed",
        "version": version,
        "floating_ips": [{"address": f, "type": "floating", "version": 4} for f in floating],
    }


def _vif(label: str, mac: str, *ips: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"port-{mac}",
        "address": mac,
        "network": {"id": f"net-{label}", "label": label, "subnets": [{"ips": list(ips)}]},
    }


NETWORK_INFO = (
    _vif("private", "fa:16:3e:00:00:01", _ip("10.0.0.5", floating=("172.24.4.10",))),
    _vif("public", "fa:16:3e:00:00:02", _ip("2001:db8::5", 6)),
    _vif("private", "fa:16:3e:00:00:03", _ip("10.0.0.6")),
)


def seed(services: ApiServices, project: str = "demo", **fields: Any) -> None:
    inst = Instance(
        uuid=SERVER, project_id=project, user_id="demo", flavor=FLAVOR, vm_state="active",
        launched_at=datetime(2024, 1, 1), network_info=NETWORK_INFO, **fields,
    )  # fmt: skip
    with services.api_db.begin() as api:
        instance_mappings.create(api, SERVER, project, "demo", cell_uuid=CELL1_UUID)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.create(conn, inst)


def _message(resp: Any) -> str:
    return str(next(iter(resp.json().values()))["message"])


def test_index_groups_by_label_fixed_then_floating(api: ApiClient, services: ApiServices) -> None:
    seed(services)
    resp = api.get(BASE, token=USER)
    assert resp.status_code == 200
    assert resp.json() == {
        "addresses": {
            "private": [
                {"version": 4, "addr": "10.0.0.5"},
                {"version": 4, "addr": "10.0.0.6"},
                {"version": 4, "addr": "172.24.4.10"},
            ],
            "public": [{"version": 6, "addr": "2001:db8::5"}],
        }
    }
    assert list(resp.json()["addresses"]) == ["private", "public"]


def test_show_one_network(api: ApiClient, services: ApiServices) -> None:
    seed(services)
    resp = api.get(f"{BASE}/public", token=USER)
    assert resp.status_code == 200
    assert resp.json() == {"public": [{"version": 6, "addr": "2001:db8::5"}]}
    resp = api.get(f"{BASE}/nowhere", token=USER)
    assert resp.status_code == 404
    assert _message(resp) == "Instance is not a member of specified network"


def test_no_network_info_is_empty(api: ApiClient, services: ApiServices) -> None:
    inst = Instance(uuid=SERVER, project_id="demo", user_id="demo", flavor=FLAVOR)
    with services.api_db.begin() as conn:
        instance_mappings.create(conn, SERVER, "demo", "demo", cell_uuid=CELL1_UUID)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instances.create(conn, inst)
    assert api.get(BASE, token=USER).json() == {"addresses": {}}


def test_unknown_or_foreign_server_is_404_policy_403(api: ApiClient, services: ApiServices) -> None:
    resp = api.get(BASE, token=USER)
    assert resp.status_code == 404
    assert _message(resp) == f"Instance {SERVER} could not be found."
    seed(services, project="other")
    assert api.get(BASE, token=USER).status_code == 404
    assert api.get(f"{BASE}/public", token=USER).status_code == 404
    assert api.get(BASE, token="admin:admin").status_code == 200
    resp = api.get(BASE, token="x:other", headers={"X-Roles": "nobody"})
    assert resp.status_code == 403
    assert _message(resp) == "Policy doesn't allow os_compute_api:ips:index to be performed."


def test_query_strict_from_2102(api: ApiClient, services: ApiServices) -> None:
    seed(services)
    assert api.get(f"{BASE}?x=1", version="2.101", token=USER).status_code == 200
    assert api.get(f"{BASE}?x=1", version="2.102", token=USER).status_code == 400
    assert api.get(f"{BASE}/public?x=1", version="2.102", token=USER).status_code == 400


def test_nova_sample_shapes(api: ApiClient, services: ApiServices) -> None:
    seed(services)
    sample = load("server-ips/server-ips-resp.json")
    assert shape_diff(api.get(BASE, token=USER).json(), sample, free=frozenset({"public"})) == [
        "$.addresses: unexpected keys ['public']"
    ]
    resp = api.get(f"{BASE}/private", token=USER)
    assert shape_diff(resp.json(), load("server-ips/server-ips-network-resp.json")) == []
