"""``/flavors/{id}/os-extra_specs``: CRUD, policy, Nova's errors and 2.86 key validation."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest

from openkeel.domain import extra_specs
from openkeel.domain.errors import Invalid
from tests.client import ApiClient

DEMO = "demo:demo"
SPECS = "/v2.1/flavors/f1/os-extra_specs"


def fault(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    message: str = next(iter(resp.json().values()))["message"]
    return message


@pytest.fixture(autouse=True)
def flavor(api: ApiClient) -> None:
    body = {"flavor": {"name": "f", "id": "f1", "ram": 1, "vcpus": 1, "disk": 1}}
    assert api.post("/v2.1/flavors", json=body).status_code == 200


def test_crud(api: ApiClient) -> None:
    resp = api.post(SPECS, json={"extra_specs": {"a": "1", "hw:cpu_policy": "shared", "n": "5"}})
    assert resp.status_code == 200
    assert resp.json() == {"extra_specs": {"a": "1", "hw:cpu_policy": "shared", "n": "5"}}
    listed = api.get(SPECS, token=DEMO)
    assert listed.json() == {"extra_specs": {"a": "1", "hw:cpu_policy": "shared", "n": "5"}}
    assert api.get(f"{SPECS}/n", token=DEMO).json() == {"n": "5"}
    updated = api.put(f"{SPECS}/a", json={"a": "2"})
    assert updated.status_code == 200 and updated.json() == {"a": "2"}
    api.post(SPECS, json={"extra_specs": {"a": "3", "b": "new"}})
    assert api.get(SPECS).json()["extra_specs"] == {
        "a": "3",
        "hw:cpu_policy": "shared",
        "n": "5",
        "b": "new",
    }
    deleted = api.delete(f"{SPECS}/a")
    assert deleted.status_code == 200 and deleted.content == b""
    assert fault(api.get(f"{SPECS}/a"), 404) == "Flavor f1 has no extra specs with key a."
    assert fault(api.delete(f"{SPECS}/a"), 404) == "Flavor f1 has no extra specs with key a."


@pytest.mark.nonconformant("Nova echoes numeric values; tempest's schema wants strings")
def test_numbers_are_echoed_and_stored_as_strings(api: ApiClient) -> None:
    resp = api.post(SPECS, json={"extra_specs": {"n": 5, "f": 1.5}}, version="2.86")
    assert resp.json() == {"extra_specs": {"n": 5, "f": 1.5}}
    assert api.put(f"{SPECS}/n", json={"n": 6}).json() == {"n": 6}
    assert api.get(SPECS).json() == {"extra_specs": {"n": "6", "f": "1.5"}}
    resp = api.post(SPECS, json={"extra_specs": {"hw:numa_nodes": 0}}, version="2.86")
    assert fault(resp, 400) == "Validation failed; '0' is less than the min value of '1'."


def test_unknown_flavor(api: ApiClient) -> None:
    message = "Flavor nope could not be found."
    base = "/v2.1/flavors/nope/os-extra_specs"
    assert fault(api.get(base), 404) == message
    assert fault(api.get(f"{base}/k"), 404) == message
    assert fault(api.post(base, json={"extra_specs": {"k": "v"}}), 404) == message
    assert fault(api.put(f"{base}/k", json={"k": "v"}), 404) == message
    assert fault(api.delete(f"{base}/k"), 404) == message


def test_private_flavor_of_another_project(api: ApiClient) -> None:
    body = {"flavor": {"name": "p", "id": "p1", "ram": 1, "vcpus": 1, "disk": 1}}
    body["flavor"]["os-flavor-access:is_public"] = False
    api.post("/v2.1/flavors", json=body)
    api.post("/v2.1/flavors/p1/os-extra_specs", json={"extra_specs": {"k": "v"}})
    assert fault(api.get("/v2.1/flavors/p1/os-extra_specs", token=DEMO), 404) == (
        "Flavor p1 could not be found."
    )
    assert api.get("/v2.1/flavors/p1/os-extra_specs").json() == {"extra_specs": {"k": "v"}}


@pytest.mark.parametrize(
    ("method", "path", "body", "rule"),
    [
        ("POST", SPECS, {"extra_specs": {"k": "v"}}, "create"),
        ("PUT", f"{SPECS}/k", {"k": "v"}, "update"),
        ("DELETE", f"{SPECS}/k", None, "delete"),
    ],
)
def test_writes_are_admin_only(
    api: ApiClient, method: str, path: str, body: Any, rule: str
) -> None:
    resp = api.request(method, path, json=body, token=DEMO)
    assert fault(resp, 403) == (
        f"Policy doesn't allow os_compute_api:os-flavor-extra-specs:{rule} to be performed."
    )


def test_reads_need_reader(api: ApiClient) -> None:
    api.post(SPECS, json={"extra_specs": {"k": "v"}})
    no_role = {"X-Roles": "other"}
    assert fault(api.get(SPECS, token=DEMO, headers=no_role), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-extra-specs:index to be performed."
    )
    assert fault(api.get(f"{SPECS}/k", token=DEMO, headers=no_role), 403) == (
        "Policy doesn't allow os_compute_api:os-flavor-extra-specs:show to be performed."
    )
    assert api.get(f"{SPECS}/k", token=DEMO, headers={"X-Roles": "reader"}).status_code == 200


def test_update_body_must_name_the_uri_key(api: ApiClient) -> None:
    assert fault(api.put(f"{SPECS}/a", json={"b": "1"}), 400) == "Request body and URI mismatch"
    assert fault(api.put(f"{SPECS}/a", json={"a": "1", "b": "2"}), 400) == (
        "{'a': '1', 'b': '2'} has too many properties"
    )
    assert fault(api.put(f"{SPECS}/a", json={}), 400) == "{} should be non-empty"


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            {"bad/key": "v"},
            "Invalid input for field/attribute extra_specs. Value: {'bad/key': 'v'}. "
            "'bad/key' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'",
        ),
        (
            {"k": True},
            "Invalid input for field/attribute k. Value: True. True is not of type "
            "'string', 'number'",
        ),
    ],
)
def test_create_bad_values(api: ApiClient, specs: dict[str, Any], message: str) -> None:
    assert fault(api.post(SPECS, json={"extra_specs": specs}), 400) == message


def test_create_body_errors(api: ApiClient) -> None:
    assert fault(api.post(SPECS, json={}), 400) == "'extra_specs' is a required property"
    resp = api.post(SPECS, content=b"{", headers={"Content-Type": "application/json"})
    assert fault(resp, 400) == "Malformed request body"


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ({"hw:cpu_policy": "fast"}, "'fast' is not one of: dedicated, shared, mixed."),
        ({"hw:numa_nodes": "x"}, "'x' is not a valid integer value."),
        ({"hw:numa_nodes": "0"}, "'0' is less than the min value of '1'."),
        ({"hw:bogus": "1"}, "extra spec 'hw:bogus' does not appear to be a valid extra spec."),
        ({"trait:HW_CPU_NOPE": "required"}, None),
        ({"hide_hypervisor_id": "maybe"}, "'maybe' is not a valid boolean-like value."),
    ],
)
def test_2_86_validation(api: ApiClient, specs: dict[str, Any], message: str | None) -> None:
    assert api.post(SPECS, json={"extra_specs": specs}, version="2.85").status_code == 200
    resp = api.post(SPECS, json={"extra_specs": specs}, version="2.86")
    if message is None:
        message = "extra spec 'trait:HW_CPU_NOPE' does not appear to be a valid extra spec."
    assert fault(resp, 400) == f"Validation failed; {message}"
    put = api.put(f"{SPECS}/{next(iter(specs))}", json=specs, version="2.86")
    assert fault(put, 400) == f"Validation failed; {message}"


def test_2_86_accepts_known_and_foreign_keys(api: ApiClient) -> None:
    specs = {
        "hw:cpu_policy": "dedicated",
        "resources1:VCPU": "2",
        "trait:HW_CPU_X86_AVX2": "required",
        "traitX:CUSTOM_FOO": "forbidden",
        "capabilities:cpu_info:features": "avx",
        "hw:numa_cpus.0": "0-3",
        "my:own": "anything",
        "plain": "x",
    }
    assert api.post(SPECS, json={"extra_specs": specs}, version="2.86").status_code == 200


CASES = [
    ("hw:cpu_policy", "mixed"),
    ("hw:cpu_policy", "x"),
    ("hw:cpu_realtime_mask", "^0-1"),
    ("hw:cpu_realtime_mask", "zz"),
    ("hw:numa_mem.1", "0"),
    ("hw:numa_mem.1", "1024"),
    ("hw:mem_page_size", "large"),
    ("hw:mem_page_size", "2MB"),
    ("hw:mem_page_size", "bogus"),
    ("hw_rng:rate_bytes", "-1"),
    ("hw:watchdog_action", "reset"),
    ("quota:cpu_shares", "10"),
    ("quota:vif_inbound_average", "x"),
    ("resources:CUSTOM_GPU", "1"),
    ("resources:UNKNOWN", "1"),
    ("resourcesfoo:VCPU", "a"),
    ("trait:CUSTOM_X", "bad"),
    ("trait_bad-group!:X", "required"),
    ("os:secure_boot", "required"),
    ("aggregate_instance_extra_specs:foo", "<in> x"),
    ("vmware:hw_version", "vmx-13"),
    ("pci_passthrough:alias", "a:1"),
    ("accel:device_profile", "p"),
    ("group_policy", "none"),
    ("group_policy", "bad"),
    ("capabilities:unknown_thing", "1"),
    ("hw:boot_menu", "yes"),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("key", "value"), CASES)
def test_validation_matches_nova(key: str, value: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nova = importlib.import_module("nova.api.validation.extra_specs.validators")
        nova_exc = importlib.import_module("nova.exception")
    try:
        nova.validate(key, value)
        expected = None
    except nova_exc.ValidationError as exc:
        expected = exc.format_message()
    try:
        extra_specs.validate(key, value)
        got = None
    except Invalid as exc:
        got = exc.message
    assert got == expected


@pytest.mark.oracle
def test_catalog_covers_every_nova_rule() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nova = importlib.import_module("nova.api.validation.extra_specs.validators")
    ours = {rule.key_regex.pattern for rule in extra_specs.catalog.RULES}
    theirs = {validator.name_regex for validator in nova.VALIDATORS.values()}
    assert ours == theirs
