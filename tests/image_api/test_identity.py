"""The image API's caller comes from the compute API's authenticator (one function, so any
authenticator works): its project and roles, and its 401 with Keystone's WWW-Authenticate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openkeel.api.context import RequestContext
from openkeel.api.keystone import KeystoneUnauthorized
from openkeel.cmd.api import image_identity
from openkeel.image_api.app import build_image_app
from openkeel.image_api.services import image_api_services
from openkeel.image_api.usecases.image_data import recover
from tests.client import ApiClient
from tests.conftest import make_services
from tests.image_api.test_images import error


class TokenTable:
    """An authenticator over a fixed token table, standing in for Keystone."""

    def __init__(self) -> None:
        self.tokens = {"t-admin": ("u1", "p1", ("admin",)), "t-member": ("u2", "p2", ("member",))}

    def authenticate_cached(self, headers: dict[str, str], request_id: str) -> None:
        return None

    def authenticate(self, headers: dict[str, str], request_id: str) -> RequestContext:
        found = self.tokens.get(headers.get("x-auth-token", ""))
        if found is None:
            raise KeystoneUnauthorized("http://keystone.test/v3")
        user, project, roles = found
        return RequestContext(user, project, roles, request_id, headers["x-auth-token"])


async def nothing_else(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The app behind the image API: runs the lifespan; no request reaches it here."""
    assert scope["type"] == "lifespan", "only /image is served in this test"
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ApiClient]:
    services = image_api_services(make_services(tmp_path).api_db, tmp_path)
    recover(services)
    api = ApiClient(build_image_app(nothing_else, services, image_identity(TokenTable())))
    try:
        yield api
    finally:
        api.close()


def test_caller_project_and_admin_come_from_the_authenticator(client: ApiClient) -> None:
    created = client.post("/image/v2/images", json={"name": "m"}, token="t-member")
    assert created.status_code == 201 and created.json()["owner"] == "p2"
    public = {"name": "pub", "visibility": "public"}
    error(client.post("/image/v2/images", json=public, token="t-member"), 403)
    assert client.post("/image/v2/images", json=public, token="t-admin").json()["owner"] == "p1"


def test_rejected_token_is_401_with_where_to_authenticate(client: ApiClient) -> None:
    resp = client.get("/image/v2/images", token="forged")
    error(resp, 401)
    assert resp.headers["www-authenticate"] == 'Keystone uri="http://keystone.test/v3"'
    assert client.get("/image", token=None).status_code == 300  # discovery needs no token
