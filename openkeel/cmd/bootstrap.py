"""First-start bootstrap of the embedded default: migrations, cells, standard flavors and
the embedded image catalog."""

from __future__ import annotations

import contextlib

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.conf.glance import locates_glance
from openkeel.db import migrate
from openkeel.db.engine import make_engine
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.db.schema import api as api_schema

# The flavors devstack creates; Nova itself creates none, but a quick start needs some.
STANDARD_FLAVORS = (
    ("1", "m1.tiny", 512, 1, 1),
    ("2", "m1.small", 2048, 1, 20),
    ("3", "m1.medium", 4096, 2, 40),
    ("4", "m1.large", 8192, 4, 80),
    ("5", "m1.xlarge", 16384, 8, 160),
)


def bootstrap_embedded(conf: cfg.ConfigOpts) -> tuple[sa.Engine, dict[str, sa.Engine]]:
    """Migrate the API and cell databases, map the cells and seed flavors; idempotent."""
    api_db = make_engine(conf.api_database.connection)
    migrate.upgrade(api_db, "api")
    cell_dbs = _setup_cells(conf, api_db)
    seed_standard_flavors(api_db)
    if not locates_glance(conf.glance):
        # No Glance: the embedded image catalog, with a default image on first start.
        EmbeddedImageCatalog(api_db).install(seed_default=True)
    return api_db, cell_dbs


def _setup_cells(conf: cfg.ConfigOpts, api_db: sa.Engine) -> dict[str, sa.Engine]:
    from openkeel.db import cells

    main_url = conf.database.connection
    with contextlib.suppress(cells.CellMappingExists):
        cells.map_cell0(api_db, cells.default_cell0_url(main_url))
    cells.ensure_cell(
        api_db, name="cell1", transport_url=conf.transport_url, database_connection=main_url
    )
    engines: dict[str, sa.Engine] = {}
    for mapping in cells.list_cells(api_db):
        if mapping.database_connection:
            engine = make_engine(mapping.database_connection)
            migrate.upgrade(engine, "cell")
            engines[mapping.uuid] = engine
    return engines


def seed_standard_flavors(api_db: sa.Engine) -> None:
    """Create m1.tiny .. m1.xlarge (ids 1-5) when there are no flavors at all."""
    flavors = api_schema.flavors
    with api_db.begin() as conn:
        if conn.execute(sa.select(sa.func.count()).select_from(flavors)).scalar_one():
            return
        for flavorid, name, ram, vcpus, disk in STANDARD_FLAVORS:
            conn.execute(
                flavors.insert().values(
                    flavorid=flavorid,
                    name=name,
                    memory_mb=ram,
                    vcpus=vcpus,
                    root_gb=disk,
                    ephemeral_gb=0,
                    swap=0,
                    rxtx_factor=1.0,
                    is_public=True,
                    disabled=False,
                )
            )
