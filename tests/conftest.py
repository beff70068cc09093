"""Fixtures shared by every test folder: settings, databases, the API client.

Every API test gets a fresh cloud layout as ``openkeel all-in-one`` builds it: a migrated API
database with cell0 and cell1 mapped, and both cell databases migrated. Migrating per test would
dominate the suite's run time, so the layout is migrated once per session into a template and
copied (three SQLite files) for each test.

Every test also runs under the leak check of tests/leaks.py: threads and sockets it (or a
module/session fixture, when finalized) leaves behind fail it at teardown.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.conf import make_config
from openkeel.db import migrate
from openkeel.db.cells import CELL0_UUID
from openkeel.db.engine import make_engine
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.schema import api as api_schema
from openkeel.image_api.services import image_files
from tests import leaks
from tests.client import ApiClient

pytest_plugins = ["tests.conformance.plugin"]

CELL1_UUID = "c3e1a1f0-0000-4000-8000-00000000c311"
_FILES = {"api": "nova_api.sqlite", CELL0_UUID: "nova_cell0.sqlite", CELL1_UUID: "nova.sqlite"}
_template: Path | None = None


def _template_dir(base: Path) -> Path:
    """Migrate the three databases once per test session."""
    global _template
    if _template is None:
        _template = base
        for name, filename in _FILES.items():
            engine = make_engine(f"sqlite:///{base / filename}")
            migrate.upgrade(engine, "api" if name == "api" else "cell")
            engine.dispose()
    return _template


def make_services(
    tmp_path: Path, api_db_url: str | None = None, **overrides: object
) -> ApiServices:
    """Settings for tests (noauth) and fresh databases: API DB plus cell0 and cell1."""
    if api_db_url is not None:
        engine = make_engine(api_db_url)
        api_schema.metadata.create_all(engine)
        cells: dict[str, sa.Engine] = {}
        url = api_db_url
    else:
        template = _template_dir(Path(tempfile.mkdtemp(prefix="openkeel-tpl-")))
        # A directory per call: a test may build several clouds in one tmp_path.
        tmp_path = Path(tempfile.mkdtemp(dir=tmp_path, prefix="cloud-"))
        for filename in _FILES.values():
            shutil.copyfile(template / filename, tmp_path / filename)
        url = f"sqlite:///{tmp_path / _FILES['api']}"
        engine = make_engine(url)
        cells = {}
        with engine.begin() as conn:
            for cell_uuid in (CELL0_UUID, CELL1_UUID):
                cell_url = f"sqlite:///{tmp_path / _FILES[cell_uuid]}"
                conn.execute(
                    sa.insert(api_schema.cell_mappings).values(
                        uuid=cell_uuid,
                        name="cell0" if cell_uuid == CELL0_UUID else "cell1",
                        transport_url="none:///" if cell_uuid == CELL0_UUID else "inproc://",
                        database_connection=cell_url,
                        disabled=False,
                    )
                )
                cells[cell_uuid] = make_engine(cell_url)
    # state_path: where compute hosts put snapshot data (the embedded catalog's files)
    conf = make_config(
        overrides={"api.auth_strategy": "noauth2", "api_database.connection": url,
                   "state_path": str(tmp_path), **overrides}
    )  # fmt: skip
    return ApiServices(conf=conf, api_db=engine, cell_dbs=cells)


def make_services_with_images(tmp_path: Path, **overrides: object) -> ApiServices:
    """:func:`make_services` whose image service is the embedded catalog, installed, with its
    image files under ``tmp_path`` (as the all-in-one's)."""
    services = make_services(tmp_path, None, **{"state_path": str(tmp_path), **overrides})
    catalog = EmbeddedImageCatalog(services.api_db, image_files(tmp_path))
    catalog.install()
    services.images = catalog
    return services


_scoped: dict[int, leaks.Snapshot] = {}  # id(FixtureDef) -> what its setup created


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object]) -> object:
    """Attribute what a module or session fixture's setup creates to that fixture."""
    if fixturedef.scope == "function":
        return (yield)
    before = leaks.Snapshot.now()
    try:
        return (yield)
    finally:
        _scoped[id(fixturedef)] = leaks.Snapshot.now() - before


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef[object]) -> None:
    """A module or session fixture, once finalized, must have ended what it created."""
    created = _scoped.pop(id(fixturedef), None)
    if created is None:
        return
    left = leaks.still_alive(created)
    if left.threads or left.sockets:
        pytest.fail(f"fixture {fixturedef.argname} left {leaks.describe(left)}", pytrace=False)


@pytest.fixture(autouse=True)
def no_leftover_threads_or_sockets() -> Iterator[None]:
    """Fail the test if threads or sockets it started outlive it (after a bounded join)."""
    before = leaks.Snapshot.now()
    yield
    allowed = before
    for created in list(_scoped.values()):
        allowed = allowed | created
    left = leaks.leftovers(allowed)
    if left.threads or left.sockets:
        pytest.fail(f"test left {leaks.describe(left)}", pytrace=False)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[ApiServices]:
    built = make_services(tmp_path)
    yield built
    for cell in built.cell_dbs.values():
        cell.dispose()


@pytest.fixture
def api(services: ApiServices) -> Iterator[ApiClient]:
    """An in-process client of a fresh compute API (SQLite, noauth, cell0 + cell1)."""
    client = ApiClient(build_api_app(services))
    yield client
    client.close()
    services.api_db.dispose()
