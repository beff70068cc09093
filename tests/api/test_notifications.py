"""The API's notifications through HTTP: flavor.*, keypair.*, aggregate.* and server_group.*
as Nova's API sends them (publisher ``nova-api:<host>``), each matching Nova's sample; the
legacy ones where Nova has them."""

from __future__ import annotations

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.notifications.drivers import MemoryDriver
from openkeel.notifications.emitter import Notifier
from tests.api.server_fakes import IMAGE, USER, flavor, placed_server
from tests.api.test_aggregates import cell  # noqa: F401  (fixture)
from tests.client import ApiClient
from tests.notifications.samples import assert_matches

PUBLIC_KEY = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx8nkQv/zgGgB4rMYmIf+6A4l6Rr+o/6lHBQdW5aYd44bd8JttDCE/F/pNRr0lRE+PiqSPO8nDPHw0010JeMH9gYgnnFlyY3/OcJ02RhIPyyxYpv9FhY+2YiUkpwFOcLImyrxEsYXpD/0d3ac30bNH6Sw9JD9UZHYcpSxsIbECHw== Generated-by-Nova"  # fmt: skip


AGGREGATE_ACTIONS = (
    "create",
    "update_prop",
    "update_metadata",
    "add_host",
    "remove_host",
    "delete",
)


def _listen(services: ApiServices) -> MemoryDriver:
    memory = MemoryDriver()
    services.notifier = Notifier(drivers=(memory,), notification_format="both").prepare("nova-api", "api-host")  # fmt: skip
    return memory


def _versioned(memory: MemoryDriver) -> list[str]:
    sent = [s.message for s in memory.sent if s.topic == "versioned_notifications"]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
        assert message["publisher_id"] == "nova-api:api-host"
    return [m["event_type"] for m in sent]


def test_flavor_notifications(services: ApiServices, api: ApiClient) -> None:
    memory = _listen(services)
    body = {"flavor": {"name": "f1", "ram": 512, "vcpus": 1, "disk": 1, "id": "f1"}}
    assert api.post("/v2.1/flavors", json=body).status_code == 200
    specs = {"extra_specs": {"hw:watchdog_action": "disabled"}}
    assert api.post("/v2.1/flavors/f1/os-extra_specs", json=specs).status_code == 200
    assert api.put("/v2.1/flavors/f1", json={"flavor": {"description": "d"}}, version="2.55").status_code == 200  # fmt: skip
    assert api.delete("/v2.1/flavors/f1").status_code == 202
    assert _versioned(memory) == ["flavor.create", "flavor.update", "flavor.update", "flavor.delete"]  # fmt: skip
    update = memory.sent[1].message["payload"]["nova_object.data"]
    assert update["extra_specs"] == {"hw:watchdog_action": "disabled"}
    assert memory.events("notifications") == []  # versioned only, as Nova


def test_keypair_notifications(services: ApiServices, api: ApiClient) -> None:
    memory = _listen(services)
    imported = {"keypair": {"name": "imported", "public_key": PUBLIC_KEY}}
    assert api.post("/v2.1/os-keypairs", json=imported).status_code == 200
    assert api.post("/v2.1/os-keypairs", json={"keypair": {"name": "made"}}).status_code == 200
    assert api.delete("/v2.1/os-keypairs/made").status_code == 202
    assert _versioned(memory) == [
        "keypair.import.start", "keypair.import.end",
        "keypair.create.start", "keypair.create.end",
        "keypair.delete.start", "keypair.delete.end",
    ]  # fmt: skip
    assert memory.events("notifications")[0] == "keypair.import.start"


def test_aggregate_notifications(services: ApiServices, api: ApiClient, cell: sa.Engine) -> None:  # noqa: F811
    memory = _listen(services)
    created = api.post("/v2.1/os-aggregates", json={"aggregate": {"name": "agg"}}).json()
    url = f"/v2.1/os-aggregates/{created['aggregate']['id']}"
    assert api.put(url, json={"aggregate": {"name": "agg2"}}).status_code == 200
    assert api.post(f"{url}/action", json={"set_metadata": {"metadata": {"k": "v"}}}).status_code == 200  # fmt: skip
    assert api.post(f"{url}/action", json={"add_host": {"host": "h1"}}).status_code == 200
    assert api.post(f"{url}/action", json={"remove_host": {"host": "h1"}}).status_code == 200
    assert api.delete(url).status_code == 200
    assert _versioned(memory) == [
        f"aggregate.{action}.{phase}" for action in AGGREGATE_ACTIONS for phase in ("start", "end")
    ]
    add_end = memory.sent[14].message
    assert add_end["event_type"] == "aggregate.add_host.end"
    assert add_end["payload"]["nova_object.data"]["hosts"] == ["h1"]
    assert "aggregate.addhost.end" in memory.events("notifications")


def test_server_group_notifications(services: ApiServices, api: ApiClient) -> None:
    memory = _listen(services)
    body = {"server_group": {"name": "g", "policies": ["anti-affinity"]}}
    group = api.post("/v2.1/os-server-groups", json=body).json()["server_group"]
    assert api.delete(f"/v2.1/os-server-groups/{group['id']}").status_code == 204
    assert _versioned(memory) == ["server_group.create", "server_group.delete"]
    assert memory.events("notifications") == ["servergroup.create", "servergroup.delete"]


def test_a_server_joining_a_group_sends_add_member(services: ApiServices, api: ApiClient) -> None:
    flavor(api)
    body = {"server_group": {"name": "g", "policies": ["anti-affinity"]}}
    group = api.post("/v2.1/os-server-groups", json=body, token=USER).json()["server_group"]
    memory = _listen(services)
    server = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1"},
              "os:scheduler_hints": {"group": group["id"]}}  # fmt: skip
    created = api.post("/v2.1/servers", json=server, token=USER)
    assert created.status_code == 202
    assert _versioned(memory) == ["server_group.add_member"]
    data = memory.sent[0].message["payload"]["nova_object.data"]
    assert data["members"] == [created.json()["server"]["id"]]
    assert memory.events("notifications") == ["servergroup.addmember"]


def test_service_status_changes_and_delete_notify_as_the_service(
    services: ApiServices,
    api: ApiClient,
    cell: sa.Engine,  # noqa: F811
) -> None:
    memory = _listen(services)
    body = {"host": "h1", "binary": "nova-compute"}
    assert api.put("/v2.1/os-services/disable", json=body).status_code == 200
    listed = api.get("/v2.1/os-services?host=h1").json()["services"]
    assert api.delete(f"/v2.1/os-services/{listed[0]['id']}").status_code == 204
    sent = [s.message for s in memory.sent if s.topic == "versioned_notifications"]
    assert [m["event_type"] for m in sent] == ["service.update", "service.delete"]
    for message in sent:
        assert_matches(message, message["event_type"].replace(".", "-"))
        assert message["publisher_id"] == "nova-compute:h1"
    assert sent[0]["payload"]["nova_object.data"]["disabled"] is True


def test_lock_and_unlock_notify(services: ApiServices, api: ApiClient) -> None:
    server_id = placed_server(api, services)
    memory = _listen(services)
    lock = {"lock": {"locked_reason": "global warming"}}
    assert api.post(f"/v2.1/servers/{server_id}/action", json=lock, version="2.73", token=USER).status_code == 202  # fmt: skip
    assert api.post(f"/v2.1/servers/{server_id}/action", json={"unlock": None}, token=USER).status_code == 202  # fmt: skip
    assert _versioned(memory) == ["instance.lock", "instance.unlock"]
    locked = memory.sent[0].message["payload"]["nova_object.data"]
    assert (locked["locked"], locked["locked_reason"]) == (True, "global warming")
    assert memory.events("notifications") == []  # no legacy twin in Nova
