"""The os-security-groups and os-security-group-rules proxies (2.1-2.35): a project's groups
and rules from the embedded network service, with Nova's checks and its translations of the
network's answers (404 unknown, 400 refused or in use, 403 over quota or a second default)."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.network.adapter import InstanceNetRef
from openkeel.network.embedded import service as embedded
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from tests.client import ApiClient

USER, OTHER, ADMIN = "demo:demo", "other:other", "admin:admin"
GROUPS, RULES = "/v2.1/os-security-groups", "/v2.1/os-security-group-rules"
MISSING = "2b0c3e12-8c3c-4f4e-9a53-000000000000"


def _message(resp: Any) -> str:
    return str(next(iter(resp.json().values()))["message"])


def _create(api: ApiClient, name: str, token: str = USER, **more: Any) -> Any:
    body = {"security_group": {"name": name, "description": f"{name} group", **more}}
    return api.post(GROUPS, json=body, token=token, version="2.35")


def _group(api: ApiClient, name: str, token: str = USER) -> dict[str, Any]:
    resp = _create(api, name, token)
    assert resp.status_code == 200, resp.text
    return dict(resp.json()["security_group"])


def _rule(api: ApiClient, **rule: Any) -> Any:
    return api.post(RULES, json={"security_group_rule": rule}, token=USER, version="2.35")


def test_create_show_update_delete(api: ApiClient) -> None:
    web = _group(api, "web")
    assert web["name"] == "web" and web["tenant_id"] == "demo" and web["rules"] == []
    shown = api.get(f"{GROUPS}/{web['id']}", token=USER).json()["security_group"]
    assert shown == web
    body = {"security_group": {"name": "www", "description": "renamed"}}
    updated = api.put(f"{GROUPS}/{web['id']}", json=body, token=USER)
    assert updated.status_code == 200
    assert updated.json()["security_group"]["name"] == "www"
    assert api.delete(f"{GROUPS}/{web['id']}", token=USER).status_code == 202
    gone = api.get(f"{GROUPS}/{web['id']}", token=USER)
    assert gone.status_code == 404
    assert _message(gone) == f"Security group {web['id']} does not exist"


def test_index_own_project_sorted_paged_and_all_tenants_for_admin(api: ApiClient) -> None:
    for name in ("zeta", "alpha"):
        _group(api, name)
    _group(api, "theirs", OTHER)
    names = [g["name"] for g in api.get(GROUPS, token=USER).json()["security_groups"]]
    assert names == ["alpha", "default", "zeta"]  # Neutron made the project's default
    page = api.get(f"{GROUPS}?limit=1&offset=1", token=USER).json()["security_groups"]
    assert len(page) == 1
    # all_tenants is for admins; a member's is ignored
    assert "theirs" not in str(api.get(f"{GROUPS}?all_tenants=1", token=USER).json())
    every = api.get(f"{GROUPS}?all_tenants=1", token=ADMIN).json()["security_groups"]
    assert {"theirs", "zeta"} <= {g["name"] for g in every}
    assert api.get(f"{GROUPS}?limit=-1", token=USER).status_code == 400


def test_another_projects_group_is_not_found(api: ApiClient) -> None:
    theirs = _group(api, "theirs", OTHER)
    for method in ("GET", "DELETE"):
        resp = api.request(method, f"{GROUPS}/{theirs['id']}", token=USER)
        assert resp.status_code == 404, method
    body = {"security_group": {"name": "mine", "description": ""}}
    assert api.put(f"{GROUPS}/{theirs['id']}", json=body, token=USER).status_code == 404
    assert _rule(api, parent_group_id=theirs["id"], ip_protocol="tcp", from_port=1,
                 to_port=2).status_code == 404  # fmt: skip


def test_bad_ids_and_bodies(api: ApiClient) -> None:
    resp = api.get(f"{GROUPS}/not-a-uuid", token=USER)
    assert resp.status_code == 400 and _message(resp) == "Security group id should be uuid"
    assert api.delete(f"{RULES}/not-a-uuid", token=USER).status_code == 400
    assert _create(api, "x" * 256).status_code == 400
    assert api.post(GROUPS, json={"security_group": {"name": "n"}}, token=USER).status_code == 400
    assert _rule(api, parent_group_id="nope").status_code == 400


def test_default_name_and_quota_are_403(api: ApiClient) -> None:
    resp = _create(api, "default")
    assert resp.status_code == 403
    assert _message(resp) == "Default security group already exists."
    for n in range(embedded.QUOTAS["security_group"] - 1):  # the default group counts too
        _group(api, f"g{n}")
    over = _create(api, "one-too-many")
    assert over.status_code == 403
    assert _message(over) == "Quota exceeded for resources: ['security_group']."


def test_rules_cidr_and_group(api: ApiClient) -> None:
    web = _group(api, "web")
    ssh = _rule(api, parent_group_id=web["id"], ip_protocol="tcp", from_port=22, to_port=22,
                cidr="10.0.0.0/8")  # fmt: skip
    assert ssh.status_code == 200, ssh.text
    rule = ssh.json()["security_group_rule"]
    assert rule["ip_range"] == {"cidr": "10.0.0.0/8"} and rule["group"] == {}
    assert (rule["ip_protocol"], rule["from_port"], rule["to_port"]) == ("tcp", 22, 22)
    default = next(g for g in api.get(GROUPS, token=USER).json()["security_groups"]
                   if g["name"] == "default")  # fmt: skip
    by_group = _rule(api, parent_group_id=web["id"], group_id=default["id"], ip_protocol="icmp")
    assert by_group.status_code == 200, by_group.text
    made = by_group.json()["security_group_rule"]
    assert made["group"] == {"name": "default", "tenant_id": "demo"}
    assert (made["from_port"], made["to_port"]) == (-1, -1)
    shown = api.get(f"{GROUPS}/{web['id']}", token=USER).json()["security_group"]
    assert {r["id"] for r in shown["rules"]} == {rule["id"], made["id"]}
    assert api.delete(f"{RULES}/{rule['id']}", token=USER).status_code == 202
    gone = api.delete(f"{RULES}/{rule['id']}", token=USER)
    assert gone.status_code == 404
    assert _message(gone) == f"Security group rule {rule['id']} does not exist"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"ip_protocol": "tcp", "from_port": 22}, "Not enough parameters to build a valid rule."),
        ({"ip_protocol": "tcp", "from_port": 30, "to_port": 20, "cidr": "10.0.0.0/8"},
         "Invalid port range 30:20. Former value cannot be greater than the later"),
        ({"ip_protocol": "tcp", "from_port": 0, "to_port": 20},
         "Invalid port range 0:20. Valid TCP ports should be between 1-65535"),
        ({"ip_protocol": "icmp", "from_port": 300, "to_port": 0},
         "Invalid port range 300:0. For ICMP, the type:code must be valid"),
        ({"ip_protocol": "gre", "from_port": 1, "to_port": 2}, "Invalid IP protocol gre."),
        ({"ip_protocol": "tcp", "from_port": "a", "to_port": 2},
         "Invalid input received: To and From ports must be integers"),
        ({"ip_protocol": "tcp", "from_port": 1, "to_port": 2, "cidr": "10.0.0.300/8"},
         "10.0.0.300/8 is not a valid IP network."),
        ({"ip_protocol": "tcp", "from_port": 1, "to_port": 2, "cidr": "10.0.0.0/0"},
         "Bad prefix for network in cidr 10.0.0.0/0"),
    ],
)  # fmt: skip
def test_invalid_rules_are_400(api: ApiClient, rule: dict[str, Any], message: str) -> None:
    web = _group(api, "web")
    resp = _rule(api, parent_group_id=web["id"], **rule)
    assert resp.status_code == 400, resp.text
    assert _message(resp) == message


def test_duplicate_rule_unknown_parent_and_source(api: ApiClient) -> None:
    web = _group(api, "web")
    rule = {"parent_group_id": web["id"], "ip_protocol": "udp", "from_port": 53, "to_port": 53,
            "cidr": "0.0.0.0/0"}  # fmt: skip
    assert _rule(api, **rule).status_code == 200
    again = _rule(api, **rule)
    assert again.status_code == 400
    assert _message(again) == f"This rule already exists in group {web['id']}"
    assert _rule(api, **{**rule, "parent_group_id": MISSING}).status_code == 404
    assert _rule(api, **{**rule, "group_id": MISSING}).status_code == 404


def test_group_in_use_cannot_be_deleted(api: ApiClient, services: ApiServices) -> None:
    web = _group(api, "web")
    adapter = get_network_adapter(services.conf, services.api_db)
    assert isinstance(adapter, FlatNetwork)
    ref = InstanceNetRef("5c1a7e7e-0000-4000-8000-0000000000aa", "demo", security_groups=("web",))
    adapter.allocate_for_instance(ref, [])
    resp = api.delete(f"{GROUPS}/{web['id']}", token=USER)
    assert resp.status_code == 400
    assert _message(resp) == f"Security Group {web['id']} in use."


def test_reader_may_read_not_write(api: ApiClient) -> None:
    headers = {"X-Roles": "reader"}
    assert api.get(GROUPS, token=USER, headers=headers).status_code == 200
    body = {"security_group": {"name": "n", "description": ""}}
    assert api.post(GROUPS, json=body, token=USER, headers=headers).status_code == 403


def test_served_up_to_2_35(api: ApiClient) -> None:
    web = _group(api, "web")
    for method, path in (("GET", GROUPS), ("GET", f"{GROUPS}/{web['id']}"),
                         ("DELETE", f"{GROUPS}/{web['id']}"), ("POST", RULES)):  # fmt: skip
        resp = api.request(method, path, json={}, token=USER, version="2.36")
        assert resp.status_code == 404, (method, path)
