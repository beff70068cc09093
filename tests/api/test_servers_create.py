"""``POST /servers``: body per microversion, Nova's 400/403 messages, quota, build rows, cast."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import build_requests, instance_mappings, request_specs
from tests.api.server_fakes import ADMIN, IMAGE, USER, create, flavor, place, wire
from tests.client import ApiClient

BASE = "http://openkeel.test"


def _post(api: ApiClient, server: dict[str, Any], version: str = "2.1", **kw: Any) -> Any:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1", **server}, **kw}
    return api.post("/v2.1/servers", json=body, version=version, token=USER)


def _error(resp: Any, status: int, message: str) -> None:
    assert resp.status_code == status, resp.text
    (fault,) = resp.json().values()
    assert fault["message"] == message


@pytest.fixture
def ready(api: ApiClient, services: ApiServices) -> ApiClient:
    flavor(api)
    return api


def test_create_answer_rows_and_cast(ready: ApiClient, services: ApiServices) -> None:
    conductor, _ = wire(services)
    resp = _post(ready, {"adminPass": "secret", "metadata": {"a": "b"}})
    assert resp.status_code == 202
    server = resp.json()["server"]
    sid = server["id"]
    assert server == {
        "id": sid,
        "links": [
            {"rel": "self", "href": f"{BASE}/v2.1/servers/{sid}"},
            {"rel": "bookmark", "href": f"{BASE}/servers/{sid}"},
        ],
        "OS-DCF:diskConfig": "MANUAL",
        "security_groups": [{"name": "default"}],
        "adminPass": "secret",
    }
    assert resp.headers["location"] == f"{BASE}/v2.1/servers/{sid}"
    with services.api_db.connect() as conn:
        built = build_requests.get(conn, sid).instance
        assert (built.vm_state, built.task_state, built.metadata) == (
            "building",
            "scheduling",
            {"a": "b"},
        )
        assert instance_mappings.get(conn, sid).cell_uuid is None
        assert request_specs.get(conn, sid).flavor.flavorid == "1"
    assert conductor.names() == ["schedule_and_build_instances"]
    call = conductor.calls[0][1]
    assert call["admin_password"] == "secret"
    assert call["instance_uuids"] == (sid,)


def test_reservation_id_and_multiple(ready: ApiClient, services: ApiServices) -> None:
    conductor, _ = wire(services)
    resp = _post(ready, {"min_count": 2, "max_count": 3, "return_reservation_id": True})
    assert resp.status_code == 202
    assert list(resp.json()) == ["reservation_id"]
    assert resp.json()["reservation_id"].startswith("r-")
    names = sorted(s["name"] for s in ready.get("/v2.1/servers", token=USER).json()["servers"])
    assert names == ["vm-1", "vm-2", "vm-3"]
    assert len(conductor.calls[0][1]["instance_uuids"]) == 3


def test_one_request_builds_a_bounded_number_of_servers(
    ready: ApiClient, services: ApiServices
) -> None:
    """Unlimited quota: max_count 2**64 is cut to [api] max_servers_per_request (the API would
    otherwise allocate rows without end); a min_count past it is a 400 naming the option."""
    conductor, _ = wire(services)
    services.conf.set_override("max_servers_per_request", 3, group="api")
    admin_quota = {"quota_set": {"instances": -1, "cores": -1, "ram": -1}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=admin_quota, token=ADMIN).status_code == 200
    resp = _post(ready, {"min_count": 1, "max_count": 2**64, "return_reservation_id": True})
    assert resp.status_code == 202, resp.text
    assert len(conductor.calls[0][1]["instance_uuids"]) == 3
    _error(
        _post(ready, {"min_count": 4, "max_count": 2**64}),
        400,
        "min_count 4 is more than the 3 servers one request can build "
        "([api] max_servers_per_request).",
    )


@pytest.mark.parametrize(
    ("server", "version", "message"),
    [
        ({"flavorRef": "99"}, "2.1", "Flavor 99 could not be found."),
        ({"imageRef": "6b8b4567-0000-4000-8000-000000000000"}, "2.1", "Can not find requested image"),
        ({"imageRef": ""}, "2.1", "Missing imageRef attribute"),
        ({"key_name": "nokey"}, "2.1", "Invalid key_name provided."),
        ({"min_count": 3, "max_count": 2}, "2.1", "min_count must be <= max_count"),
        ({"availability_zone": "a:b:c:d"}, "2.1", "Unable to parse availability_zone"),
        ({"availability_zone": "nowhere"}, "2.1", "The requested availability zone is not available"),
        (
            {"networks": [{"uuid": "6b8b4567-0000-4000-8000-0000000000ee"}]},
            "2.1",
            "Network 6b8b4567-0000-4000-8000-0000000000ee could not be found.",
        ),
        (
            {"max_count": 2,
             "networks": [{"uuid": "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001", "fixed_ip": "10.0.0.9"}]},
            "2.1",
            "Failed to launch instances: max_count cannot be greater than 1 if an fixed_ip is "
            "specified.",
        ),
        (
            {"networks": [{"uuid": "not-a-uuid"}]},
            "2.1",
            "Bad networks format: network uuid is not in proper format (not-a-uuid)",
        ),
        (
            {
                "networks": [
                    {"port": "6b8b4567-0000-4000-8000-000000000001"},
                    {"port": "6b8b4567-0000-4000-8000-000000000001"},
                ]
            },
            "2.1",
            "Port ID '6b8b4567-0000-4000-8000-000000000001' was specified twice: you cannot "
            "attach a port multiple times.",
        ),
        ({"networks": [{"fixed_ip": "10.0.0.1"}]}, "2.1", "Bad network format: missing 'uuid'"),
        (
            {"block_device_mapping": [{"volume_id": "6b8b4567-0000-4000-8000-000000000002"}],
             "block_device_mapping_v2": [{"source_type": "blank"}]},
            "2.1",
            "Using different block_device_mapping syntaxes is not allowed in the same request.",
        ),
        (
            {"block_device_mapping_v2": [{"source_type": "volume", "boot_index": 0}]},
            "2.1",
            "Block Device Mapping is Invalid: Missing device UUID.",
        ),
        (
            {"block_device_mapping_v2": [{"source_type": "volume", "destination_type": "volume",
              "uuid": "6b8b4567-0000-4000-8000-000000000003", "boot_index": 0}]},
            "2.1",
            # Nova's API answers Cinder's VolumeNotFound with 400.
            "Volume 6b8b4567-0000-4000-8000-000000000003 could not be found.",
        ),
        (
            {"hostname": "h1", "max_count": 2, "networks": "none"},
            "2.90",
            "Unable to allocate a single hostname to multiple instances",
        ),
    ],
)  # fmt: skip
def test_create_errors(
    ready: ApiClient, server: dict[str, Any], version: str, message: str
) -> None:
    _error(_post(ready, server, version), 400, message)


def test_networks_required_from_2_37(ready: ApiClient) -> None:
    resp = _post(ready, {}, "2.37")
    _error(
        resp,
        400,
        f"Invalid input for field/attribute server. Value: {{'name': 'vm', 'imageRef': "
        f"'{IMAGE}', 'flavorRef': '1'}}. 'networks' is a required property",
    )
    assert _post(ready, {"networks": "auto"}, "2.37").status_code == 202


def test_quota_instances_message(ready: ApiClient, services: ApiServices) -> None:
    body = {"quota_set": {"instances": 2}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=body, token=ADMIN).status_code == 200
    place(services, create(ready)["server"]["id"])
    _error(
        _post(ready, {"min_count": 2}),
        403,
        "Quota exceeded for instances: Requested 2, but already used 1 of 2 instances",
    )
    # max_count is trimmed to what fits when min_count still fits.
    assert _post(ready, {"max_count": 5}).status_code == 202
    listed = ready.get("/v2.1/servers", token=USER).json()["servers"]
    assert len(listed) == 2


def test_quota_cores_message(ready: ApiClient, services: ApiServices) -> None:
    body = {"quota_set": {"cores": 1}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=body, token=ADMIN).status_code == 200
    place(services, create(ready)["server"]["id"])
    _error(
        _post(ready, {}),
        403,
        "Quota exceeded for cores: Requested 1, but already used 1 of 1 cores",
    )


def test_quota_counts_unscheduled_builds(ready: ApiClient) -> None:
    body = {"quota_set": {"instances": 1}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=body, token=ADMIN).status_code == 200
    create(ready)
    _error(
        _post(ready, {}),
        403,
        "Quota exceeded for instances: Requested 1, but already used 1 of 1 instances",
    )


def test_metadata_quota(ready: ApiClient) -> None:
    body = {"quota_set": {"metadata_items": 1}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=body, token=ADMIN).status_code == 200
    _error(
        _post(ready, {"metadata": {"a": "1", "b": "2"}}),
        403,
        "Maximum number of metadata items exceeds 1",
    )


def test_forced_host_needs_admin(ready: ApiClient) -> None:
    resp = _post(ready, {"availability_zone": "nova:host1"})
    _error(
        resp, 403, "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed."
    )


def test_host_and_zone_host_exclusive(ready: ApiClient) -> None:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1", "networks": "none",
                       "availability_zone": "nova:host1", "host": "host1"}}  # fmt: skip
    resp = ready.post("/v2.1/servers", json=body, version="2.74", token=ADMIN)
    _error(
        resp,
        400,
        "One mechanism with host and/or hypervisor_hostname and another mechanism with "
        "zone:host:node are mutually exclusive.",
    )


def test_personality_removed_in_2_57(ready: ApiClient) -> None:
    files = [{"path": "/etc/motd", "contents": "aGVsbG8="}]
    assert _post(ready, {"personality": files}, "2.56", networks="none").status_code != 500
    resp = _post(ready, {"personality": files, "networks": "none"}, "2.57")
    assert resp.status_code == 400
    assert "Additional properties are not allowed ('personality' was unexpected)" in resp.text


def test_tags_and_description(ready: ApiClient) -> None:
    sid = create(ready, "2.52", tags=["a", "b"], description="d")["server"]["id"]
    shown = ready.get(f"/v2.1/servers/{sid}", version="2.52", token=USER).json()["server"]
    assert (shown["tags"], shown["description"]) == (["a", "b"], "d")
    assert shown["status"] == "BUILD"


def test_admin_pass_hidden_when_disabled(api: ApiClient, services: ApiServices) -> None:
    flavor(api)
    services.conf.set_override("enable_instance_password", False, group="api")
    assert "adminPass" not in create(api)["server"]


def test_server_group_membership_and_quota(ready: ApiClient) -> None:
    body = {"server_group": {"name": "g", "policies": ["anti-affinity"]}}
    group = ready.post("/v2.1/os-server-groups", json=body, token=USER).json()["server_group"]
    quota = {"quota_set": {"server_group_members": 1}}
    assert ready.put("/v2.1/os-quota-sets/demo", json=quota, token=ADMIN).status_code == 200
    hints = {"os:scheduler_hints": {"group": group["id"]}}
    first = _post(ready, {}, **hints)
    assert first.status_code == 202
    sid = first.json()["server"]["id"]
    shown = ready.get(f"/v2.1/servers/{sid}", version="2.71", token=USER).json()["server"]
    assert shown["server_groups"] == [group["id"]]
    _error(_post(ready, {}, **hints), 403, "Quota exceeded, too many servers in group")
    missing = "6b8b4567-0000-4000-8000-00000000aaaa"
    resp = _post(ready, {}, **{"os:scheduler_hints": {"group": missing}})
    _error(resp, 400, f"Instance group {missing} could not be found.")


def test_forced_host_zone_rules(ready: ApiClient, services: ApiServices) -> None:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1",
                       "availability_zone": "nova:host1"}}  # fmt: skip
    resp = ready.post("/v2.1/servers", json=body, token=ADMIN)
    assert resp.status_code == 202, resp.text
    with services.api_db.connect() as conn:
        spec = request_specs.get(conn, resp.json()["server"]["id"])
    assert (spec.availability_zone, spec.force_hosts) == ("nova", ("host1",))
    body["server"]["availability_zone"] = "elsewhere:host1"
    resp = ready.post("/v2.1/servers", json=body, token=ADMIN)
    with services.api_db.connect() as conn:
        spec = request_specs.get(conn, resp.json()["server"]["id"])
    assert spec.availability_zone is None  # the host's own zone applies, as in Nova


def test_other_projects_group_is_not_found(ready: ApiClient) -> None:
    body = {"server_group": {"name": "g", "policies": ["anti-affinity"]}}
    theirs = ready.post("/v2.1/os-server-groups", json=body, token="alice:other").json()
    gid = theirs["server_group"]["id"]
    resp = _post(ready, {}, **{"os:scheduler_hints": {"group": gid}})
    _error(resp, 400, f"Instance group {gid} could not be found.")
    shown = ready.get(f"/v2.1/os-server-groups/{gid}", token="alice:other").json()
    assert shown["server_group"]["members"] == []
    # An admin may place a server into any project's group, as in Nova.
    admin = ready.post(
        "/v2.1/servers",
        json={
            "server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1"},
            "os:scheduler_hints": {"group": gid},
        },
        token=ADMIN,
    )
    assert admin.status_code == 202, admin.text


# Sent -> shown, as netaddr (Nova's IPAddress fields) prints them.
ACCESS_IPV6 = {
    "0000:0000:0000:0000:0000:babe:220.12.22.2": "::babe:dc0c:1602",
    "2001:DB8:0:0::1": "2001:db8::1",
    "::ffff:1.2.3.4": "::ffff:1.2.3.4",
}


@pytest.mark.parametrize(("sent", "shown"), ACCESS_IPV6.items())
def test_access_ips_normalised(ready: ApiClient, sent: str, shown: str) -> None:
    resp = _post(ready, {"accessIPv4": "10.0.0.1", "accessIPv6": sent})
    assert resp.status_code == 202, resp.text
    sid = resp.json()["server"]["id"]
    server = ready.get(f"/v2.1/servers/{sid}", token=USER).json()["server"]
    assert (server["accessIPv4"], server["accessIPv6"]) == ("10.0.0.1", shown)
    update = {"server": {"accessIPv6": sent.lower()}}
    updated = ready.put(f"/v2.1/servers/{sid}", json=update, token=USER).json()["server"]
    assert updated["accessIPv6"] == shown


def test_scoped_access_ipv6_refused(ready: ApiClient) -> None:
    assert _post(ready, {"accessIPv6": "fe80::1%eth0"}).status_code == 400


def test_unknown_security_group(ready: ApiClient) -> None:
    for name in ("nosuch", "6b8b4567-0000-4000-8000-00000000aaaa"):
        resp = _post(ready, {"security_groups": [{"name": "default"}, {"name": name}]})
        _error(resp, 400, f"Unable to find security_group with name or id '{name}'")
    assert _post(ready, {"security_groups": [{"name": "default"}]}).status_code == 202
