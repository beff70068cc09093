"""The server lifecycle across every role, on both transports: boot, show, list, delete."""

from __future__ import annotations

import pytest

from openkeel.clients.placement_embedded import EmbeddedPlacement
from tests.db.backends import DatabaseFactory
from tests.functional.conftest import Cloud, server_db_services, start_cloud, stop_cloud


def test_boot_show_list_delete(cloud: Cloud) -> None:
    created = cloud.boot("web-1")
    server = cloud.wait(created["id"])
    assert server["status"] == "ACTIVE"
    assert server["OS-EXT-STS:vm_state"] == "active"
    assert server["OS-EXT-STS:power_state"] == 1
    assert server["OS-EXT-SRV-ATTR:host"] in cloud.computes
    assert cloud.usage() == {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}
    actions = cloud.api.get(f"/v2.1/servers/{created['id']}/os-instance-actions").json()
    (create,) = actions["instanceActions"]
    assert create["action"] == "create"
    events = cloud.events(created["id"], "create")
    assert events.get("compute__do_build_and_run_instance") == "Success", events

    listed = cloud.api.get("/v2.1/servers/detail", version="2.37").json()["servers"]
    assert [s["id"] for s in listed] == [created["id"]]
    assert cloud.api.get("/v2.1/servers?name=^web", version="2.37").json()["servers"][0][
        "name"] == "web-1"  # fmt: skip

    stop = cloud.api.post(f"/v2.1/servers/{created['id']}/action", {"os-stop": None})
    assert stop.status_code == 202, stop.text
    assert cloud.wait(created["id"])["status"] == "SHUTOFF"
    actions = cloud.api.get(f"/v2.1/servers/{created['id']}/os-instance-actions").json()
    assert [a["action"] for a in actions["instanceActions"]] == ["stop", "create"]

    assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    cloud.wait(created["id"], gone=True)
    assert cloud.api.get("/v2.1/servers/detail").json()["servers"] == []
    assert cloud.usage() == {}


def test_boot_with_network_gets_an_address(cloud: Cloud) -> None:
    created = cloud.boot("net-1", networks="auto")
    server = cloud.wait(created["id"])
    assert server["status"] == "ACTIVE"
    ((label, addresses),) = server["addresses"].items()
    assert label == "private"
    assert addresses[0]["version"] == 4 and addresses[0]["addr"].startswith("10.")


def test_unschedulable_server_lands_in_cell0_with_fault(cloud: Cloud) -> None:
    flavor = {"flavor": {"name": "picky", "ram": 512, "vcpus": 1, "disk": 1}}
    flavor_id = cloud.api.post("/v2.1/flavors", flavor).json()["flavor"]["id"]
    specs = {"extra_specs": {"trait:CUSTOM_NO_HOST_HAS_THIS": "required"}}
    assert cloud.api.post(f"/v2.1/flavors/{flavor_id}/os-extra_specs", specs).status_code == 200
    created = cloud.boot("too-big", flavor=flavor_id)
    server = cloud.wait(created["id"])
    assert server["status"] == "ERROR"
    assert server["fault"]["code"] == 500
    assert server["fault"]["message"].startswith("No valid host was found.")
    assert cloud.usage() == {}
    assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    cloud.wait(created["id"], gone=True)


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_lifecycle_on_server_databases(
    backend: str, database_factory: DatabaseFactory, placement: EmbeddedPlacement, tmp_path: object
) -> None:
    services = server_db_services(database_factory, backend, tmp_path)  # type: ignore[arg-type]
    cloud = start_cloud(services, placement, "inproc://functional-db")
    try:
        cloud.add_compute()
        created = cloud.boot("db-1")
        assert cloud.wait(created["id"])["status"] == "ACTIVE"
        cloud.api.delete(f"/v2.1/servers/{created['id']}")
        cloud.wait(created["id"], gone=True)
        assert cloud.usage() == {}
    finally:
        stop_cloud(cloud)


def test_soft_delete_restore_and_force_delete(cloud: Cloud) -> None:
    cloud.services.conf.set_override("reclaim_instance_interval", 3600)
    created = cloud.boot("soft-1")
    assert cloud.wait(created["id"])["status"] == "ACTIVE"
    assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    assert cloud.wait(created["id"])["status"] == "SOFT_DELETED"
    assert cloud.usage() == {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}  # kept until reclaim
    restore = cloud.api.post(f"/v2.1/servers/{created['id']}/action", {"restore": None})
    assert restore.status_code == 202, restore.text
    assert cloud.wait(created["id"])["status"] == "ACTIVE"
    assert cloud.api.delete(f"/v2.1/servers/{created['id']}").status_code == 204
    assert cloud.wait(created["id"])["status"] == "SOFT_DELETED"
    force = cloud.api.post(f"/v2.1/servers/{created['id']}/action", {"forceDelete": None})
    assert force.status_code == 202, force.text
    cloud.wait(created["id"], gone=True)
    assert cloud.usage() == {}
