"""``GET /servers/{id}``: fields per microversion, admin-only attributes, fault, host status."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.schema import cell as cell_tables
from tests.api.server_fakes import ADMIN, IMAGE, USER, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

BASE = "http://openkeel.test"
NETWORK_INFO = [
    {
        "address": "fa:16:3e:00:00:01",
        "network": {
            "label": "private",
            "subnets": [
                {
                    "ips": [
                        {
                            "address": "192.168.1.30",
                            "type": "fixed",
                            "version": 4,
                            "floating_ips": [
                                {"address": "172.24.4.10", "type": "floating", "version": 4}
                            ],
                        }
                    ]
                }
            ],
        },
    }
]


@pytest.fixture
def server(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    sid: str = create(api, metadata={"k": "v"})["server"]["id"]
    place(services, sid, network_info=NETWORK_INFO)
    return sid


def _show(api: ApiClient, sid: str, version: str, token: str = USER) -> dict[str, Any]:
    resp = api.get(f"/v2.1/servers/{sid}", version=version, token=token)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()["server"]
    return body


BASE_KEYS = {
    "accessIPv4", "accessIPv6", "addresses", "created", "flavor", "hostId", "id", "image",
    "links", "metadata", "name", "status", "tenant_id", "user_id", "updated",
    "OS-DCF:diskConfig", "progress", "OS-EXT-AZ:availability_zone", "config_drive", "key_name",
    "OS-SRV-USG:launched_at", "OS-SRV-USG:terminated_at", "security_groups",
    "OS-EXT-STS:task_state", "OS-EXT-STS:vm_state", "OS-EXT-STS:power_state",
    "os-extended-volumes:volumes_attached",
}  # fmt: skip
ADMIN_21 = {
    "OS-EXT-SRV-ATTR:host", "OS-EXT-SRV-ATTR:instance_name",
    "OS-EXT-SRV-ATTR:hypervisor_hostname",
}  # fmt: skip
ADMIN_23 = ADMIN_21 | {
    "OS-EXT-SRV-ATTR:hostname", "OS-EXT-SRV-ATTR:kernel_id", "OS-EXT-SRV-ATTR:launch_index",
    "OS-EXT-SRV-ATTR:ramdisk_id", "OS-EXT-SRV-ATTR:reservation_id",
    "OS-EXT-SRV-ATTR:root_device_name", "OS-EXT-SRV-ATTR:user_data",
}  # fmt: skip


@pytest.mark.parametrize(
    ("version", "token", "extra"),
    [
        ("2.1", USER, set()),
        ("2.1", ADMIN, ADMIN_21),
        ("2.3", ADMIN, ADMIN_23),
        ("2.9", USER, {"locked"}),
        ("2.16", ADMIN, ADMIN_23 | {"locked", "host_status"}),
        ("2.19", USER, {"locked", "description"}),
        ("2.26", USER, {"locked", "description", "tags"}),
        ("2.63", USER, {"locked", "description", "tags", "trusted_image_certificates"}),
        ("2.71", USER, {"locked", "description", "tags", "trusted_image_certificates",
                        "server_groups"}),
        ("2.73", USER, {"locked", "description", "tags", "trusted_image_certificates",
                        "server_groups", "locked_reason"}),
        ("2.90", USER, {"locked", "description", "tags", "trusted_image_certificates",
                        "server_groups", "locked_reason", "OS-EXT-SRV-ATTR:hostname"}),
        ("2.96", USER, {"locked", "description", "tags", "trusted_image_certificates",
                        "server_groups", "locked_reason", "OS-EXT-SRV-ATTR:hostname",
                        "pinned_availability_zone"}),
        ("2.100", USER, {"locked", "description", "tags", "trusted_image_certificates",
                         "server_groups", "locked_reason", "OS-EXT-SRV-ATTR:hostname",
                         "pinned_availability_zone", "scheduler_hints"}),
    ],
)  # fmt: skip
def test_keys_per_version(
    api: ApiClient, server: str, version: str, token: str, extra: set[str]
) -> None:
    assert set(_show(api, server, version, token)) == BASE_KEYS | extra


def test_values(api: ApiClient, server: str) -> None:
    body = _show(api, server, "2.1")
    assert body["status"] == "ACTIVE"
    assert body["addresses"] == {
        "private": [
            {"version": 4, "addr": "192.168.1.30", "OS-EXT-IPS:type": "fixed",
             "OS-EXT-IPS-MAC:mac_addr": "fa:16:3e:00:00:01"},
            {"version": 4, "addr": "172.24.4.10", "OS-EXT-IPS:type": "floating",
             "OS-EXT-IPS-MAC:mac_addr": "fa:16:3e:00:00:01"},
        ]
    }  # fmt: skip
    assert body["flavor"] == {
        "id": "1",
        "links": [{"rel": "bookmark", "href": f"{BASE}/flavors/1"}],
    }
    assert body["image"] == {
        "id": IMAGE,
        "links": [{"rel": "bookmark", "href": f"{BASE}/images/{IMAGE}"}],
    }
    assert body["metadata"] == {"k": "v"}
    assert body["OS-EXT-AZ:availability_zone"] == "nova"
    assert body["OS-EXT-STS:power_state"] == 1
    assert len(body["hostId"]) == 56
    assert body["security_groups"] == [{"name": "default"}]


def test_flavor_embedded_from_2_47(api: ApiClient, server: str) -> None:
    assert _show(api, server, "2.47")["flavor"] == {
        "vcpus": 1, "ram": 512, "disk": 1, "ephemeral": 0, "swap": 0, "original_name": "f1",
        "extra_specs": {},
    }  # fmt: skip


def test_error_fault(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid, host=None, active=False, vm_state="error", task_state=None)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        conn.execute(
            sa.insert(cell_tables.instance_faults).values(
                instance_uuid=sid, code=500, message="No valid host was found. ",
                details="trace", deleted=0, created_at=sa.func.now(),
            )
        )  # fmt: skip
    body = _show(api, sid, "2.1")
    assert body["status"] == "ERROR"
    assert body["fault"]["message"] == "No valid host was found. "
    assert "details" not in body["fault"]
    assert _show(api, sid, "2.1", ADMIN)["fault"]["details"] == "trace"
    assert "progress" not in body


def test_volume_backed_image_is_empty_string(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid, image_ref="")
    assert _show(api, sid, "2.1")["image"] == ""


def test_host_status(api: ApiClient, server: str) -> None:
    # No compute service record for host1: Nova shows no status ("").
    assert _show(api, server, "2.16", ADMIN)["host_status"] == ""
    assert "host_status" not in _show(api, server, "2.16", USER)


def test_not_found_and_other_project(api: ApiClient, server: str) -> None:
    missing = "6b8b4567-0000-4000-8000-00000000ffff"
    resp = api.get(f"/v2.1/servers/{missing}", token=USER)
    assert resp.status_code == 404
    assert resp.json()["itemNotFound"]["message"] == f"Instance {missing} could not be found."
    assert api.get(f"/v2.1/servers/{server}", token="other:other").status_code == 404
    assert api.get(f"/v2.1/servers/{server}", token=ADMIN).status_code == 200


def test_unknown_query_refused_from_2_102(api: ApiClient, server: str) -> None:
    assert api.get(f"/v2.1/servers/{server}?x=1", version="2.101", token=USER).status_code == 200
    resp = api.get(f"/v2.1/servers/{server}?x=1", version="2.102", token=USER)
    assert resp.status_code == 400
