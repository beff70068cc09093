"""Fixtures shared by every test folder: settings, databases, the API client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.conf import make_config
from openkeel.db.engine import make_engine
from openkeel.db.schema import api as api_schema
from tests.client import ApiClient

pytest_plugins = ["tests.conformance.plugin"]


def make_services(
    tmp_path: Path, api_db_url: str | None = None, **overrides: object
) -> ApiServices:
    """Settings for tests (noauth) and a freshly created API database."""
    url = api_db_url or f"sqlite:///{tmp_path / 'nova_api.sqlite'}"
    conf = make_config(
        overrides={"api.auth_strategy": "noauth2", "api_database.connection": url, **overrides}
    )
    engine = make_engine(url)
    api_schema.metadata.create_all(engine)
    return ApiServices(conf=conf, api_db=engine)


@pytest.fixture
def services(tmp_path: Path) -> ApiServices:
    return make_services(tmp_path)


@pytest.fixture
def api(services: ApiServices) -> Iterator[ApiClient]:
    """An in-process client of a fresh compute API (SQLite, noauth)."""
    client = ApiClient(build_api_app(services))
    yield client
    client.close()
    services.api_db.dispose()
