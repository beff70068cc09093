"""Application credentials: created by a user for their project, used with a secret instead of
a password, bounded to the roles they carry, gone when deleted or expired."""

from __future__ import annotations

import datetime
from typing import Any

from tests.identity_api.conftest import V3, IdentityCloud
from tests.identity_api.test_tokens import _member, error


def _cred_auth(credential_id: str, secret: str) -> dict[str, Any]:
    return {"auth": {"identity": {"methods": ["application_credential"],
                                  "application_credential": {"id": credential_id,
                                                             "secret": secret}}}}  # fmt: skip


def _create(cloud: IdentityCloud, token: str, user_id: str, **body: Any) -> Any:
    path = f"{V3}/users/{user_id}/application_credentials"
    return cloud.call("POST", path, token, json={"application_credential": body})


def test_create_use_and_delete(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "capo", "pw")
    token = cloud.login("capo", "pw")
    made = _create(cloud, token, user, name="ci", description="cluster api")
    assert made.status_code == 201, made.text
    cred = made.json()["application_credential"]
    assert len(cred["secret"]) > 30 and cred["unrestricted"] is False
    assert {r["name"] for r in cred["roles"]} == {"member", "reader"}
    listed = cloud.call("GET", f"{V3}/users/{user}/application_credentials", token).json()
    assert [c["name"] for c in listed["application_credentials"]] == ["ci"]
    assert "secret" not in listed["application_credentials"][0]

    issued = cloud.client.post(f"{V3}/auth/tokens", json=_cred_auth(cred["id"], cred["secret"]),
                               token=None)  # fmt: skip
    assert issued.status_code == 201, issued.text
    body = issued.json()["token"]
    assert body["methods"] == ["application_credential"]
    assert body["application_credential"] == {"id": cred["id"], "name": "ci", "restricted": True}
    assert body["project"]["name"] == "admin"
    cred_token = issued.headers["X-Subject-Token"]
    assert cloud.call("GET", "/v2.1/servers", cred_token).status_code == 200
    # A restricted credential cannot make more credentials.
    assert _create(cloud, cred_token, user, name="more").status_code == 403
    wrong = cloud.client.post(f"{V3}/auth/tokens", json=_cred_auth(cred["id"], "nope"), token=None)
    assert error(wrong, 401)
    by_name = {"auth": {"identity": {"methods": ["application_credential"],
               "application_credential": {"name": "ci", "secret": cred["secret"],
                                          "user": {"name": "capo",
                                                   "domain": {"id": "default"}}}}}}  # fmt: skip
    assert cloud.client.post(f"{V3}/auth/tokens", json=by_name, token=None).status_code == 201

    path = f"{V3}/users/{user}/application_credentials/{cred['id']}"
    assert cloud.call("DELETE", path, token).status_code == 204
    assert cloud.call("GET", "/v2.1/servers", cred_token).status_code == 401
    assert cloud.call("GET", path, token).status_code == 404


def test_roles_are_bounded_and_follow_the_user(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "ro", "pw")
    token = cloud.login("ro", "pw")
    cred = _create(cloud, token, user, name="reader-only", roles=[{"name": "reader"}]).json()
    cred = cred["application_credential"]
    issued = cloud.client.post(f"{V3}/auth/tokens", json=_cred_auth(cred["id"], cred["secret"]),
                               token=None)  # fmt: skip
    assert [r["name"] for r in issued.json()["token"]["roles"]] == ["reader"]
    reader_token = issued.headers["X-Subject-Token"]
    # A reader may list but not create servers (Nova's policies).
    assert cloud.call("GET", "/v2.1/servers", reader_token).status_code == 200
    boot = {"server": {"name": "x", "imageRef": "f889e72b-5f7e-546f-a852-ffb79bfbb64f",
                       "flavorRef": "1", "networks": "none"}}  # fmt: skip
    refused = cloud.call("POST", "/v2.1/servers", reader_token, json=boot, version="2.37")
    assert refused.status_code == 403
    # Roles the user does not hold cannot be delegated.
    assert _create(cloud, token, user, name="x", roles=[{"name": "admin"}]).status_code == 403
    # Another user's credentials are not theirs to make or read.
    assert _create(cloud, admin, user, name="y").status_code == 403
    other = _member(cloud, admin, "other", "pw")
    other_token = cloud.login("other", "pw")
    listed = cloud.call("GET", f"{V3}/users/{user}/application_credentials", other_token)
    assert listed.status_code == 403
    assert other


def test_expiry_and_bad_input(cloud: IdentityCloud, admin: str) -> None:
    user = _member(cloud, admin, "exp", "pw")
    token = cloud.login("exp", "pw")
    past = _create(cloud, token, user, name="old", expires_at="2001-01-01T00:00:00")
    assert "in the past" in error(past, 400)
    assert error(_create(cloud, token, user), 400).startswith("Invalid input for field")
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=5)
    made = _create(cloud, token, user, name="soon", expires_at=soon.isoformat(), secret="s3cret")
    cred = made.json()["application_credential"]
    assert cred["secret"] == "s3cret" and cred["expires_at"].startswith(
        soon.strftime("%Y-%m-%dT%H:%M")
    )
    dup = _create(cloud, token, user, name="soon")
    assert error(dup, 409)
    later = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(hours=1)
    cloud.identity._clock = lambda: later
    expired = cloud.client.post(f"{V3}/auth/tokens", json=_cred_auth(cred["id"], "s3cret"),
                                token=None)  # fmt: skip
    assert error(expired, 401)
