"""os-keypairs through the HTTP API: every microversion difference, policy, quota and error
path, with Nova's statuses and messages."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import NoAuth
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.resources.keypairs import routes, schemas
from openkeel.api.routing import RouteTable
from openkeel.api.services import ApiServices
from openkeel.api.validation import Schema
from openkeel.db.schema import api as api_schema
from tests.client import ApiClient
from tests.conftest import make_services

# Tempest's keypair list schema forbids keys besides "keypairs"; Nova's own (2.35) allows links.
TEMPEST_LACKS_LINKS = pytest.mark.nonconformant("tempest's list schema has no keypairs_links")
SAMPLE_KEY = (
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx8nkQv/zgGgB4rMYmIf+6A4l6Rr+o/6lHBQdW5aYd44bd8JttDCE"
    "/F/pNRr0lRE+PiqSPO8nDPHw0010JeMH9gYgnnFlyY3/OcJ02RhIPyyxYpv9FhY+2YiUkpwFOcLImyrxEsYXpD/0d3"
    "ac30bNH6Sw9JD9UZHYcpSxsIbECHw== Generated-by-Nova"
)
SAMPLE_FINGERPRINT = "1e:2c:9b:56:79:4b:45:77:f9:ca:7a:98:2c:b0:d5:3c"
URL = "/v2.1/os-keypairs"
DEMO = "demo:demo"
PROJECT = "6f70656e737461636b20342065766572"
OVER_QUOTA = {"forbidden": {"code": 403, "message": "Quota exceeded, too many key pairs."}}


def _client(services: ApiServices) -> ApiClient:
    table = RouteTable()
    routes.register(table)
    app = ComputeApiApp(table, NoAuth(), PolicyEnforcer(services.conf), services, workers=2)
    return ApiClient(app)


@pytest.fixture
def api(services: ApiServices) -> Iterator[ApiClient]:
    """A compute API serving only os-keypairs (independent of other resources' state)."""
    client = _client(services)
    yield client
    client.close()
    services.api_db.dispose()


@pytest.fixture
def make_api(tmp_path: Path) -> Iterator[Any]:
    """Build an API with config overrides, e.g. ``make_api(**{"quota.key_pairs": 2})``."""
    made: list[tuple[ApiClient, ApiServices]] = []

    def build(**overrides: object) -> tuple[ApiClient, ApiServices]:
        services = make_services(tmp_path, None, **overrides)
        made.append((_client(services), services))
        return made[-1]

    yield build
    for client, services in made:
        client.close()
        services.api_db.dispose()


def _import(
    api: ApiClient, name: str, version: str = "2.2", token: str = DEMO, **extra: Any
) -> Any:
    body = {"keypair": {"name": name, "public_key": SAMPLE_KEY, **extra}}
    return api.post(URL, body, version=version, token=token)


def _fault(kind: str, code: int, message: str) -> dict[str, Any]:
    return {kind: {"code": code, "message": message}}


# --- create -------------------------------------------------------------------------------


def test_generate_at_21_is_200_without_type(api: ApiClient) -> None:
    resp = api.post(URL, {"keypair": {"name": "gen"}}, version="2.1", token=DEMO)
    assert resp.status_code == 200
    body = resp.json()["keypair"]
    assert sorted(body) == ["fingerprint", "name", "private_key", "public_key", "user_id"]
    assert body["name"] == "gen" and body["user_id"] == "demo"
    assert body["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    assert body["public_key"].startswith("ssh-rsa ")
    assert body["public_key"].endswith(" Generated-by-Nova")
    assert re.fullmatch(r"([0-9a-f]{2}:){15}[0-9a-f]{2}", body["fingerprint"])


def test_generate_at_22_is_201_with_type(api: ApiClient) -> None:
    resp = api.post(URL, {"keypair": {"name": "gen"}}, version="2.2", token=DEMO)
    assert resp.status_code == 201
    body = resp.json()["keypair"]
    assert sorted(body) == ["fingerprint", "name", "private_key", "public_key", "type", "user_id"]
    assert body["type"] == "ssh"


def test_generate_x509(api: ApiClient) -> None:
    resp = api.post(URL, {"keypair": {"name": "win", "type": "x509"}}, version="2.2", token=DEMO)
    assert resp.status_code == 201
    body = resp.json()["keypair"]
    assert body["type"] == "x509"
    assert body["public_key"].startswith("-----BEGIN CERTIFICATE-----\n")
    assert re.fullmatch(r"([0-9a-f]{2}:){19}[0-9a-f]{2}", body["fingerprint"])
    listed = api.get(URL, version="2.2", token=DEMO).json()["keypairs"][0]["keypair"]
    assert listed["fingerprint"] == body["fingerprint"]


def test_import_returns_no_private_key(api: ApiClient) -> None:
    resp = _import(api, "imported")
    assert resp.status_code == 201
    assert resp.json() == {
        "keypair": {
            "name": "imported",
            "public_key": SAMPLE_KEY,
            "fingerprint": SAMPLE_FINGERPRINT,
            "type": "ssh",
            "user_id": "demo",
        }
    }


def test_import_at_21_has_no_type(api: ApiClient) -> None:
    resp = _import(api, "old", version="2.1")
    assert resp.status_code == 200
    assert sorted(resp.json()["keypair"]) == ["fingerprint", "name", "public_key", "user_id"]


def test_type_rejected_before_22(api: ApiClient) -> None:
    resp = _import(api, "k", version="2.1", type="ssh")
    assert resp.status_code == 400
    assert (
        "Additional properties are not allowed ('type' was unexpected)"
        in (resp.json()["badRequest"]["message"])
    )


def test_bad_type_is_400(api: ApiClient) -> None:
    resp = _import(api, "k", type="rsa")
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute type. Value: rsa. 'rsa' is not one of ['ssh', 'x509']"
    )


def test_duplicate_name_is_409(api: ApiClient) -> None:
    assert _import(api, "dup").status_code == 201
    resp = _import(api, "dup")
    assert resp.status_code == 409
    assert resp.json() == _fault("conflictingRequest", 409, "Key pair 'dup' already exists.")
    # Same name for another user is fine.
    assert _import(api, "dup", token="other:demo").status_code == 201


def test_invalid_ssh_key_is_400(api: ApiClient) -> None:
    body = {"keypair": {"name": "bad", "public_key": "ssh-rsa AAAA not-a-key"}}
    resp = api.post(URL, body, version="2.2", token=DEMO)
    assert resp.status_code == 400
    assert resp.json() == _fault(
        "badRequest", 400, "Keypair data is invalid: failed to generate fingerprint"
    )
    assert api.get(URL, version="2.2", token=DEMO).json() == {"keypairs": []}


def test_invalid_certificate_is_400(api: ApiClient) -> None:
    resp = _import(api, "bad", type="x509")
    assert resp.status_code == 400
    message = resp.json()["badRequest"]["message"]
    assert message.startswith(
        "Keypair data is invalid: failed to generate X509 fingerprint. Error message: "
    )


def test_name_pattern_before_292(api: ApiClient) -> None:
    resp = _import(api, "me@host.example", version="2.91")
    assert resp.status_code == 400
    pattern = r"^[_\- a-zA-Z0-9]+$"
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute name. Value: me@host.example. "
        f"'me@host.example' does not match {pattern!r}"
    )


def test_292_allows_at_and_dot_and_requires_public_key(api: ApiClient) -> None:
    name = "me.and.myself@this.nice.domain.com mooh."
    resp = _import(api, name, version="2.92")
    assert resp.status_code == 201
    assert resp.json()["keypair"]["name"] == name
    resp = api.post(URL, {"keypair": {"name": "gen"}}, version="2.92", token=DEMO)
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Invalid input for field/attribute keypair. Value: {'name': 'gen'}. "
        "'public_key' is a required property"
    )


@pytest.mark.parametrize("name", [" lead", "trail ", ""])
def test_name_whitespace_and_empty_rejected(api: ApiClient, name: str) -> None:
    resp = _import(api, name)
    assert resp.status_code == 400


def test_missing_keypair_body_is_400(api: ApiClient) -> None:
    resp = api.post(URL, {"name": "x"}, version="2.2", token=DEMO)
    assert resp.status_code == 400


def test_admin_creates_for_other_user_from_210(api: ApiClient) -> None:
    resp = _import(api, "theirs", version="2.10", user_id="alice", token="admin:admin")
    assert resp.status_code == 201
    assert resp.json()["keypair"]["user_id"] == "alice"
    shown = api.get(f"{URL}/theirs", version="2.2", token="alice:demo")
    assert shown.status_code == 200


def test_user_id_in_body_rejected_before_210(api: ApiClient) -> None:
    resp = _import(api, "k", version="2.9", user_id="alice", token="admin:admin")
    assert resp.status_code == 400


def test_non_admin_cannot_create_for_other_user(api: ApiClient) -> None:
    resp = _import(api, "k", version="2.10", user_id="alice")
    assert resp.status_code == 403
    assert resp.json() == _fault(
        "forbidden", 403, "Policy doesn't allow os_compute_api:os-keypairs:create to be performed."
    )
    # Naming oneself is allowed.
    assert _import(api, "k", version="2.10", user_id="demo").status_code == 201


# --- show ---------------------------------------------------------------------------------


def test_show_fields(api: ApiClient) -> None:
    _import(api, "shown")
    resp = api.get(f"{URL}/shown", version="2.2", token=DEMO)
    assert resp.status_code == 200
    body = resp.json()["keypair"]
    created_at = body.pop("created_at")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", created_at)
    assert isinstance(body.pop("id"), int)
    assert body == {
        "name": "shown",
        "public_key": SAMPLE_KEY,
        "fingerprint": SAMPLE_FINGERPRINT,
        "type": "ssh",
        "user_id": "demo",
        "deleted": False,
        "deleted_at": None,
        "updated_at": None,
    }
    old = api.get(f"{URL}/shown", version="2.1", token=DEMO).json()["keypair"]
    assert "type" not in old and old["deleted"] is False


def test_show_missing_is_404(api: ApiClient) -> None:
    resp = api.get(f"{URL}/nope", version="2.2", token=DEMO)
    assert resp.status_code == 404
    assert resp.json() == _fault("itemNotFound", 404, "Keypair nope not found for user demo")


def test_show_other_users_key(api: ApiClient) -> None:
    _import(api, "alices", token="alice:demo")
    admin = api.get(f"{URL}/alices?user_id=alice", version="2.10", token="admin:admin")
    assert admin.status_code == 200 and admin.json()["keypair"]["user_id"] == "alice"
    # Before 2.10 the query parameter is ignored: the admin's own key is looked up.
    old = api.get(f"{URL}/alices?user_id=alice", version="2.9", token="admin:admin")
    assert old.json() == _fault("itemNotFound", 404, "Keypair alices not found for user admin")
    denied = api.get(f"{URL}/alices?user_id=alice", version="2.10", token=DEMO)
    assert denied.status_code == 403
    assert denied.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-keypairs:show to be performed."
    )


def test_unknown_query_rejected_from_275(api: ApiClient) -> None:
    _import(api, "k")
    assert api.get(f"{URL}/k?foo=1", version="2.74", token=DEMO).status_code == 200
    resp = api.get(f"{URL}/k?foo=1", version="2.75", token=DEMO)
    assert resp.status_code == 400
    assert resp.json() == _fault(
        "badRequest", 400, "Additional properties are not allowed ('foo' was unexpected)"
    )
    assert api.get(f"{URL}?foo=1", version="2.75", token=DEMO).status_code == 400
    assert api.delete(f"{URL}/k?foo=1", version="2.75", token=DEMO).status_code == 400


# --- delete -------------------------------------------------------------------------------


def test_delete_status_per_version(api: ApiClient) -> None:
    _import(api, "a")
    _import(api, "b")
    resp = api.delete(f"{URL}/a", version="2.1", token=DEMO)
    assert resp.status_code == 202 and resp.content == b""
    resp = api.delete(f"{URL}/b", version="2.2", token=DEMO)
    assert resp.status_code == 204 and resp.content == b""
    resp = api.delete(f"{URL}/b", version="2.2", token=DEMO)
    assert resp.status_code == 404
    assert resp.json() == _fault("itemNotFound", 404, "Keypair b not found for user demo")


def test_admin_deletes_other_users_key(api: ApiClient) -> None:
    _import(api, "k", token="alice:demo")
    denied = api.delete(f"{URL}/k?user_id=alice", version="2.10", token=DEMO)
    assert denied.status_code == 403
    assert api.delete(f"{URL}/k?user_id=alice", version="2.10").status_code == 204
    assert api.get(f"{URL}/k", version="2.2", token="alice:demo").status_code == 404


# --- list ---------------------------------------------------------------------------------


def test_list_sorted_by_name_per_version(api: ApiClient) -> None:
    for name in ("b", "c", "a"):
        _import(api, name)
    _import(api, "z", token="other:demo")
    body = api.get(URL, version="2.1", token=DEMO).json()
    assert [k["keypair"]["name"] for k in body["keypairs"]] == ["a", "b", "c"]
    assert body["keypairs"][0] == {
        "keypair": {"name": "a", "public_key": SAMPLE_KEY, "fingerprint": SAMPLE_FINGERPRINT}
    }
    typed = api.get(URL, version="2.2", token=DEMO).json()["keypairs"][0]["keypair"]
    assert typed["type"] == "ssh" and len(typed) == 4


def test_list_other_user_from_210(api: ApiClient) -> None:
    _import(api, "alices", token="alice:demo")
    body = api.get(f"{URL}?user_id=alice", version="2.10", token="admin:admin").json()
    assert [k["keypair"]["name"] for k in body["keypairs"]] == ["alices"]
    old = api.get(f"{URL}?user_id=alice", version="2.9", token="admin:admin").json()
    assert old == {"keypairs": []}
    denied = api.get(f"{URL}?user_id=alice", version="2.10", token=DEMO)
    assert denied.status_code == 403
    assert denied.json()["forbidden"]["message"] == (
        "Policy doesn't allow os_compute_api:os-keypairs:index to be performed."
    )


@TEMPEST_LACKS_LINKS
def test_paging_from_235(api: ApiClient) -> None:
    for name in ("k1", "k2", "k3"):
        _import(api, name)
    page = api.get(f"{URL}?limit=2", version="2.35", token=DEMO).json()
    assert [k["keypair"]["name"] for k in page["keypairs"]] == ["k1", "k2"]
    assert page["keypairs_links"] == [
        {"rel": "next", "href": "http://openkeel.test/v2.1/os-keypairs?limit=2&marker=k2"}
    ]
    rest = api.get(f"{URL}?limit=2&marker=k2", version="2.35", token=DEMO).json()
    assert rest == {
        "keypairs": [
            {
                "keypair": {
                    "name": "k3",
                    "public_key": SAMPLE_KEY,
                    "fingerprint": SAMPLE_FINGERPRINT,
                    "type": "ssh",
                }
            }
        ]
    }
    # Before 2.35 limit and marker are ignored.
    old = api.get(f"{URL}?limit=1&marker=k1", version="2.34", token=DEMO).json()
    assert len(old["keypairs"]) == 3 and "keypairs_links" not in old


@TEMPEST_LACKS_LINKS
def test_paging_link_keeps_user_id_and_project(api: ApiClient) -> None:
    for name in ("a", "b", "c"):
        _import(api, name, token="user2:demo")
    base = f"http://openkeel.test/v2.1/{PROJECT}/os-keypairs"
    first = api.get(
        f"/v2.1/{PROJECT}/os-keypairs?user_id=user2&limit=1",
        version="2.35",
        token=f"admin:{PROJECT}",
    )
    # Nova sorts the request's parameters and appends a marker it did not have.
    assert first.json()["keypairs_links"] == [
        {"rel": "next", "href": f"{base}?limit=1&user_id=user2&marker=a"}
    ]
    second = api.get(
        f"/v2.1/{PROJECT}/os-keypairs?user_id=user2&marker=a&limit=1",
        version="2.35",
        token=f"admin:{PROJECT}",
    )
    assert [k["keypair"]["name"] for k in second.json()["keypairs"]] == ["b"]
    assert second.json()["keypairs_links"] == [
        {"rel": "next", "href": f"{base}?limit=1&marker=b&user_id=user2"}
    ]


def test_unknown_marker_is_400(api: ApiClient) -> None:
    _import(api, "k1")
    resp = api.get(f"{URL}?marker=zzz", version="2.35", token=DEMO)
    assert resp.status_code == 400
    assert resp.json() == _fault("badRequest", 400, "Marker zzz could not be found.")
    # Another user's key name is no marker for me.
    _import(api, "theirs", token="alice:demo")
    assert api.get(f"{URL}?marker=theirs", version="2.35", token=DEMO).status_code == 400


def test_limit_zero_and_invalid_limits(api: ApiClient) -> None:
    _import(api, "k1")
    assert api.get(f"{URL}?limit=0", version="2.35", token=DEMO).json() == {"keypairs": []}
    for bad in ("-1", "abc", ""):
        resp = api.get(f"{URL}?limit={bad}", version="2.35", token=DEMO)
        assert resp.status_code == 400, bad


@TEMPEST_LACKS_LINKS
def test_max_limit_caps_page_and_adds_link(make_api: Any) -> None:
    api, _ = make_api(**{"api.max_limit": 2})
    for name in ("a", "b", "c"):
        _import(api, name)
    body = api.get(URL, version="2.35", token=DEMO).json()
    assert [k["keypair"]["name"] for k in body["keypairs"]] == ["a", "b"]
    assert body["keypairs_links"][0]["href"].endswith("/os-keypairs?marker=b")
    big = api.get(f"{URL}?limit=50", version="2.35", token=DEMO).json()
    assert big["keypairs_links"][0]["href"].endswith("/os-keypairs?limit=50&marker=b")
    # Before 2.35 there is no limit at all.
    assert len(api.get(URL, version="2.34", token=DEMO).json()["keypairs"]) == 3


# --- quota --------------------------------------------------------------------------------


def test_quota_from_config(make_api: Any) -> None:
    api, _ = make_api(**{"quota.key_pairs": 2})
    assert _import(api, "a").status_code == 201
    assert _import(api, "b").status_code == 201
    resp = _import(api, "c")
    assert resp.status_code == 403 and resp.json() == OVER_QUOTA
    gen = api.post(URL, {"keypair": {"name": "g"}}, version="2.2", token=DEMO)
    assert gen.status_code == 403 and gen.json() == OVER_QUOTA
    # The check comes before the key is parsed, as in Nova.
    body = {"keypair": {"name": "c", "public_key": "junk"}}
    assert api.post(URL, body, version="2.2", token=DEMO).json() == OVER_QUOTA
    # Per user: another user still has room.
    assert _import(api, "a", token="other:demo").status_code == 201


def _insert(services: ApiServices, table: sa.Table, **values: Any) -> None:
    with services.api_db.begin() as conn:
        conn.execute(table.insert().values(resource="key_pairs", **values))


def test_quota_rows_override_config(make_api: Any) -> None:
    api, services = make_api(**{"quota.key_pairs": 1})
    _insert(services, api_schema.quota_classes, class_name="default", hard_limit=2)
    assert _import(api, "a").status_code == 201
    assert _import(api, "b").status_code == 201
    assert _import(api, "c").status_code == 403
    _insert(services, api_schema.quotas, project_id="demo", hard_limit=4)
    assert _import(api, "c").status_code == 201
    # A user row applies, but the project's limit still caps it (Nova takes the minimum).
    _insert(
        services, api_schema.project_user_quotas, project_id="demo", user_id="demo", hard_limit=10
    )
    assert _import(api, "d").status_code == 201
    assert _import(api, "e").status_code == 403


def test_user_quota_row_below_project(make_api: Any) -> None:
    api, services = make_api()
    _insert(
        services, api_schema.project_user_quotas, project_id="demo", user_id="demo", hard_limit=1
    )
    assert _import(api, "a").status_code == 201
    assert _import(api, "b").status_code == 403
    assert _import(api, "b", token="other:demo").status_code == 201


def test_unlimited_and_noop(make_api: Any) -> None:
    api, _ = make_api(**{"quota.key_pairs": -1})
    assert all(_import(api, f"k{i}").status_code == 201 for i in range(3))
    api, _ = make_api(**{"quota.key_pairs": 0, "quota.driver": "nova.quota.NoopQuotaDriver"})
    assert _import(api, "k").status_code == 201


def test_quota_counts_target_user_against_callers_limits(make_api: Any) -> None:
    api, services = make_api(**{"quota.key_pairs": 1})
    # Nova checks the caller's (project, user) limits, counting the target user's keys.
    _insert(
        services, api_schema.project_user_quotas, project_id="admin", user_id="admin", hard_limit=2
    )
    _insert(services, api_schema.quotas, project_id="admin", hard_limit=2)
    for name in ("a", "b"):
        assert (
            _import(api, name, version="2.10", user_id="alice", token="admin:admin").status_code
            == 201
        )
    resp = _import(api, "c", version="2.10", user_id="alice", token="admin:admin")
    assert resp.status_code == 403


# --- schemas against Nova's (oracle) ------------------------------------------------------

BODIES: list[Any] = [
    {"keypair": {"name": ""}},
    {"keypair": {"name": " x"}},
    {"keypair": {"name": "a!"}},
    {"keypair": {"name": "x" * 256}},
    {"keypair": {"name": "ok", "type": "rsa"}},
    {"keypair": {"name": "ok", "user_id": 1}},
    {"keypair": {"name": "ok", "public_key": None}},
    {"keypair": {}},
    {},
    {"keypair": {"name": "ok", "extra": 1}},
    {"keypair": {"name": 5}},
    {"keypair": {"name": "a@b.c", "public_key": "k"}},
    {"keypair": {"name": "ok", "type": "x509", "public_key": "k", "user_id": "u"}},
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("nova_name", "ours"),
    [
        ("create", schemas.CREATE_V21),
        ("create_v22", schemas.CREATE_V22),
        ("create_v210", schemas.CREATE_V210),
        ("create_v292", schemas.CREATE_V292),
    ],
)
def test_create_schemas_answer_as_novas(nova_name: str, ours: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nova import exception  # type: ignore[import-untyped]
        from nova.api.openstack.compute.schemas import (  # type: ignore[import-untyped]
            keypairs as nova_schemas,
        )
        from nova.api.validation import validators  # type: ignore[import-untyped]

    nova = validators._SchemaValidator(getattr(nova_schemas, nova_name))
    mine = Schema(ours)
    for body in BODIES:
        try:
            nova.validate(body)
            expected = None
        except exception.ValidationError as exc:
            expected = exc.format_message()
        try:
            mine.validate_body(body)
            got = None
        except Exception as exc:
            got = getattr(exc, "message", repr(exc))
        assert got == expected, body
