"""The API process's read helpers: request-wide reader connections, the instance-location and
host-zone caches (decision 0023), and when bounded reads may run on the event loop (0024)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from openkeel.api.caches import HostZones, InstanceLocation, InstanceLocations
from openkeel.api.factory import local_databases
from openkeel.db.engine import make_engine
from openkeel.db.readers import Readers
from tests.conftest import make_services


def test_readers_open_one_connection_per_engine_and_close_them(tmp_path: Path) -> None:
    first = make_engine(f"sqlite:///{tmp_path / 'a.sqlite'}")
    second = make_engine(f"sqlite:///{tmp_path / 'b.sqlite'}")
    with Readers() as readers:
        a = readers.conn(first)
        assert readers.conn(first) is a
        b = readers.conn(second)
        assert b is not a
        assert a.execute(sa.text("select 1")).scalar() == 1
        readers.forget(second)
        assert readers.conn(second) is not b
    assert a.closed


def test_locations_keep_the_most_recently_used() -> None:
    kept = InstanceLocations(capacity=2)
    for name in ("a", "b"):
        kept.keep(name, InstanceLocation(f"cell-{name}", "p", None, None))
    assert kept.get("a") is not None  # "a" is now the most recent
    kept.keep("c", InstanceLocation("cell-c", "p", None, None))
    assert kept.get("b") is None
    assert kept.get("a") is not None and kept.get("c") is not None


def _zone(engine: sa.Engine, host: str, zone: str) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into aggregates (uuid, name, created_at) values (:u, :n, '2026-01-01')"
            ),
            {"u": f"agg-{zone}", "n": zone},
        )
        agg = conn.execute(sa.text("select id from aggregates where name = :n"), {"n": zone})
        agg_id = agg.scalar()
        conn.execute(
            sa.text(
                "insert into aggregate_hosts (host, aggregate_id, created_at)"
                " values (:h, :a, '2026-01-01')"
            ),
            {"h": host, "a": agg_id},
        )
        conn.execute(
            sa.text(
                "insert into aggregate_metadata (aggregate_id, key, value, created_at)"
                " values (:a, 'availability_zone', :z, '2026-01-01')"
            ),
            {"a": agg_id, "z": zone},
        )


def test_host_zones_are_kept_for_the_ttl_and_forgotten_on_reset(tmp_path: Path) -> None:
    services = make_services(tmp_path)
    now = [0.0]
    zones = HostZones(ttl=3600, clock=lambda: now[0])
    assert zones.zones(services.api_db, ["h1"]) == {}
    _zone(services.api_db, "h1", "az1")
    assert zones.zones(services.api_db, ["h1"]) == {}  # kept, as Nova's cache
    now[0] = 3601
    assert zones.zones(services.api_db, ["h1"]) == {"h1": {"az1"}}
    _zone(services.api_db, "h1", "az2")
    zones.reset()
    assert zones.zones(services.api_db, ["h1"]) == {"h1": {"az1", "az2"}}


def test_bounded_reads_run_inline_only_on_local_sqlite(tmp_path: Path) -> None:
    services = make_services(tmp_path)
    assert local_databases(services)
    remote = sa.create_engine("postgresql+psycopg2://nobody@127.0.0.1:1/none")
    services.cell_dbs = {**services.cell_dbs, "remote": remote}
    assert not local_databases(services)
