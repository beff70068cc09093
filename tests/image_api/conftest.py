"""An image API in front of a compute API, in process, on fresh databases and a data dir."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.cmd.api import with_image_api
from tests.client import ApiClient
from tests.conftest import make_services_with_images

PATCH = "application/openstack-images-v2.1-json-patch"


@dataclass
class ImageCloud:
    """The client, the ASGI app it talks to and where the image files go."""

    client: ApiClient
    app: Any
    services: ApiServices
    images_dir: Path


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[ImageCloud]:
    services = make_services_with_images(tmp_path)
    app = with_image_api(build_api_app(services), services)
    client = ApiClient(app)
    try:
        yield ImageCloud(client, app, services, tmp_path / "images")
    finally:
        client.close()


@pytest.fixture
def glance(cloud: ImageCloud) -> ApiClient:
    return cloud.client
