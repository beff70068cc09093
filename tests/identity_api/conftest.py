"""The embedded identity service in front of the compute and image APIs, in process, as
``[api] auth_strategy = embedded`` builds it, on fresh databases with the admin bootstrapped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from openkeel.api.services import ApiServices
from openkeel.cmd.api import api_app
from openkeel.identity_api.service import IdentityService
from tests.client import ApiClient
from tests.conftest import make_services_with_images

ADMIN_PASSWORD = "secret-admin"
V3 = "/identity/v3"


def password_auth(
    name: str, password: str, project: str | None = "admin", **scope: Any
) -> dict[str, Any]:
    """A ``POST /v3/auth/tokens`` body for a user of the default domain."""
    auth: dict[str, Any] = {
        "identity": {
            "methods": ["password"],
            "password": {"user": {"name": name, "domain": {"id": "default"}, "password": password}},
        }
    }
    if project is not None:
        auth["scope"] = {"project": {"name": project, "domain": {"id": "default"}}}
    elif scope:
        auth["scope"] = scope
    return {"auth": auth}


@dataclass
class IdentityCloud:
    client: ApiClient
    services: ApiServices
    identity: IdentityService

    def login(self, name: str, password: str, project: str | None = "admin") -> str:
        resp = self.client.post(f"{V3}/auth/tokens", json=password_auth(name, password, project),
                                token=None)  # fmt: skip
        assert resp.status_code == 201, resp.text
        return str(resp.headers["X-Subject-Token"])

    def call(self, method: str, path: str, token: str, **kw: Any) -> httpx.Response:
        return self.client.request(method, path, token=token, **kw)


def find_identity(app: Any) -> IdentityService:
    service = getattr(app, "service", None)
    assert isinstance(service, IdentityService)
    return service


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[IdentityCloud]:
    services = make_services_with_images(tmp_path, **{"api.auth_strategy": "embedded"})
    app = api_app(services, "http://openkeel.test", image_api=True)
    identity = find_identity(app)
    identity.bootstrap(ADMIN_PASSWORD)
    client = ApiClient(app)
    try:
        yield IdentityCloud(client, services, identity)
    finally:
        client.close()


@pytest.fixture
def admin(cloud: IdentityCloud) -> str:
    """An admin token scoped to the admin project."""
    return cloud.login("admin", ADMIN_PASSWORD)
