"""A server's security groups: listed from its ports in Nova's format, added and removed with
Nova's answers (404 unknown or unassociated group, 400 empty name), for the server's project."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from openkeel.api.services import ApiServices
from openkeel.network.adapter import InstanceNetRef
from openkeel.network.embedded.service import Caller
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from tests.api.server_fakes import wire
from tests.api.test_server_ips import SERVER, seed
from tests.client import ApiClient

USER = "demo:demo"
ACTION = f"/v2.1/servers/{SERVER}/action"


@pytest.fixture
def network(services: ApiServices) -> FlatNetwork:
    seed(services)
    adapter = get_network_adapter(services.conf, services.api_db)
    assert isinstance(adapter, FlatNetwork)
    adapter.allocate_for_instance(InstanceNetRef(SERVER, "demo"), [])
    return adapter


def _groups(api: ApiClient, token: str = USER) -> Any:
    resp = api.get(f"/v2.1/servers/{SERVER}/os-security-groups", token=token)
    assert resp.status_code == 200, resp.text
    from nova.api.openstack.compute.schemas import security_groups as nova_schemas

    jsonschema.validate(resp.json(), nova_schemas.index_server_response)
    return resp.json()["security_groups"]


def _action(api: ApiClient, key: str, name: Any) -> Any:
    return api.post(ACTION, json={key: {"name": name}}, token=USER)


def test_default_group_from_the_port(api: ApiClient, network: FlatNetwork) -> None:
    [group] = _groups(api)
    assert group["name"] == "default" and group["tenant_id"] == "demo"
    # Nova shows the ingress rules only; the default group's come from the group itself.
    assert {r["group"]["name"] for r in group["rules"]} == {"default"}
    assert all(r["ip_range"] == {} and r["parent_group_id"] == group["id"] for r in group["rules"])


def test_add_and_remove(api: ApiClient, network: FlatNetwork) -> None:
    web = network.service.create_security_group(Caller("demo", False), {"name": "web"})
    network.service.create_rule(Caller("demo", False), {
        "security_group_id": web["id"], "direction": "ingress", "protocol": "tcp",
        "remote_ip_prefix": "10.1.0.0/16"})  # fmt: skip
    assert _action(api, "addSecurityGroup", "web").status_code == 202
    groups = _groups(api)
    assert [g["name"] for g in groups] == ["default", "web"]
    [rule] = groups[1]["rules"]
    assert rule["ip_protocol"] == "tcp" and (rule["from_port"], rule["to_port"]) == (1, 65535)
    assert rule["ip_range"] == {"cidr": "10.1.0.0/16"} and rule["group"] == {}
    shown = api.get(f"/v2.1/servers/{SERVER}", token=USER).json()["server"]
    assert shown["security_groups"] == [{"name": "default"}, {"name": "web"}]
    assert _action(api, "addSecurityGroup", web["id"]).status_code == 202  # by id, idempotent
    assert len(_groups(api)) == 2
    assert _action(api, "removeSecurityGroup", "web").status_code == 202
    shown = api.get(f"/v2.1/servers/{SERVER}", token=USER).json()["server"]
    assert shown["security_groups"] == [{"name": "default"}]
    gone = _action(api, "removeSecurityGroup", "web")
    assert gone.status_code == 404
    assert gone.json()["itemNotFound"]["message"] == (
        f"Security group web not associated with the instance {SERVER}"
    )


@pytest.mark.parametrize(
    ("key", "name", "status", "message"),
    [
        ("addSecurityGroup", "nope", 404, "Security group nope is not found for project demo"),
        ("removeSecurityGroup", "nope", 404, "Security group nope is not found for project demo"),
        ("addSecurityGroup", " ", 400, "Security group name cannot be empty"),
        ("addSecurityGroup", "", 400, None),
    ],
)
def test_errors(
    api: ApiClient, network: FlatNetwork, key: str, name: str, status: int, message: str | None
) -> None:
    resp = _action(api, key, name)
    assert resp.status_code == status, resp.text
    if message is not None:
        assert next(iter(resp.json().values()))["message"] == message


def test_another_project_sees_no_server(api: ApiClient, network: FlatNetwork) -> None:
    assert api.get(f"/v2.1/servers/{SERVER}/os-security-groups", token="x:x").status_code == 404
    assert api.post(ACTION, json={"addSecurityGroup": {"name": "default"}},
                       token="x:x").status_code == 404  # fmt: skip


def test_a_server_without_ports(api: ApiClient, services: ApiServices) -> None:
    seed(services)
    assert _groups(api) == []
    resp = _action(api, "addSecurityGroup", "default")
    assert resp.status_code == 404
    assert "could not be found as device id on any ports" in resp.json()["itemNotFound"]["message"]


def test_a_change_is_cast_to_the_servers_host_and_the_adapter_reports_neutrons_rules(
    api: ApiClient, services: ApiServices
) -> None:
    """Decision 0077: add/removeSecurityGroup cast refresh_instance_security_rules to the
    server's host (a driver enforcing the groups itself refreshes at once); the adapter hands
    the groups of each port in Neutron's form (egress rules too) and the servers in a group."""
    seed(services, host="compute-1")
    network = get_network_adapter(services.conf, services.api_db)
    assert isinstance(network, FlatNetwork)
    [vif] = network.allocate_for_instance(InstanceNetRef(SERVER, "demo"), [])
    _conductor, compute = wire(services)
    web = network.service.create_security_group(Caller("demo", False), {"name": "web"})
    assert _action(api, "addSecurityGroup", "web").status_code == 202
    assert _action(api, "removeSecurityGroup", "web").status_code == 202
    assert [(name, call["host"], call["instance_uuid"]) for name, call in compute.calls] == [
        ("refresh_instance_security_rules", "compute-1", SERVER)
    ] * 2
    assert _action(api, "addSecurityGroup", "web").status_code == 202
    found = network.port_security_groups(SERVER)
    default = next(g for g in found["groups"].values() if g["name"] == "default")
    assert found["ports"] == {vif["id"]: [default["id"], web["id"]]}
    directions = sorted(r["direction"] for r in default["security_group_rules"])
    assert directions == ["egress", "egress", "ingress", "ingress"]
    assert {r["remote_group_id"] for r in default["security_group_rules"] if r["direction"] == "ingress"} == {default["id"]}  # fmt: skip
    assert network.security_group_members(default["id"]) == [SERVER]
    assert network.security_group_members("no-such-group") == []
    assert network.port_security_groups("no-such-server") == {"ports": {}, "groups": {}}
