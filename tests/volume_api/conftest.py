"""The embedded volume API in front of the compute API, in process (noauth tokens
``user:project``: ``admin:admin`` is the admin), with the embedded image service's images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from openkeel.cmd.api import api_app
from tests.client import ApiClient
from tests.conftest import make_services_with_images

V3 = "/volume/v3"


class Cinder:
    """Calls as one project (``token``) at one microversion."""

    def __init__(self, client: ApiClient, token: str, version: str = "3.60") -> None:
        self.client, self.token, self.version = client, token, version

    def __call__(self, method: str, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        headers = {"OpenStack-API-Version": f"volume {kw.pop('version', self.version)}"}
        return self.client.request(method, V3 + path, json=body, token=self.token,
                                   headers=headers, **kw)  # fmt: skip

    def volume(self, **attrs: Any) -> dict[str, Any]:
        resp = self("POST", "/volumes", {"volume": {"size": 1, **attrs}})
        assert resp.status_code == 202, resp.text
        return dict(self("GET", f"/volumes/{resp.json()['volume']['id']}").json()["volume"])

    def multiattach_type(self) -> str:
        """A public type whose volumes are multiattach (made by the admin once); its name."""
        body = {"volume_type": {"name": "multiattach",
                                "extra_specs": {"multiattach": "<is> True"}}}  # fmt: skip
        made = Cinder(self.client, "admin:admin")("POST", "/types", body)
        assert made.status_code in (200, 409), made.text
        return "multiattach"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ApiClient]:
    services = make_services_with_images(tmp_path)
    made = ApiClient(api_app(services, "http://openkeel.test", image_api=True))
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def admin(client: ApiClient) -> Cinder:
    return Cinder(client, "admin:admin")


@pytest.fixture
def demo(client: ApiClient) -> Cinder:
    return Cinder(client, "demo:demo")


@pytest.fixture
def other(client: ApiClient) -> Cinder:
    return Cinder(client, "other:other")


def error(resp: httpx.Response, status: int) -> str:
    """The message of a Cinder fault document with ``status``."""
    assert resp.status_code == status, resp.text
    [(_name, body)] = resp.json().items()
    assert body["code"] == status
    return str(body["message"])
