"""The embedded network API in front of the compute API, in process (noauth tokens
``user:project``: ``admin:admin`` is the admin), with the all-in-one's private and public
networks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from openkeel.cmd.api import api_app, network_service
from tests.client import ApiClient
from tests.conftest import make_services_with_images

V2 = "/networking/v2.0"
PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


class Neutron:
    """Calls as one project (``token``)."""

    def __init__(self, client: ApiClient, token: str) -> None:
        self.client, self.token = client, token

    def __call__(self, method: str, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        return self.client.request(method, V2 + path, json=body, token=self.token, **kw)

    def make(self, kind: str, **attrs: Any) -> dict[str, Any]:
        resp = self("POST", f"/{kind}s".replace("_", "-"), {kind: attrs})
        assert resp.status_code == 201, resp.text
        return dict(resp.json()[kind])


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ApiClient]:
    services = make_services_with_images(tmp_path)
    app = api_app(services, "http://openkeel.test", image_api=True)
    opts = services.conf.openkeel_network
    network_service(services.api_db).bootstrap(
        "admin", {"id": opts.network_id, "name": opts.network_name, "cidr": opts.cidr}
    )
    made = ApiClient(app)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def admin(client: ApiClient) -> Neutron:
    return Neutron(client, "admin:admin")


@pytest.fixture
def demo(client: ApiClient) -> Neutron:
    return Neutron(client, "demo:demo")


@pytest.fixture
def other(client: ApiClient) -> Neutron:
    return Neutron(client, "other:other")


def error(resp: httpx.Response, status: int) -> tuple[str, str]:
    """(type, message) of a Neutron error."""
    assert resp.status_code == status, resp.text
    body = resp.json()["NeutronError"]
    return str(body["type"]), str(body["message"])
