"""Build requests and request specs on SQLite, PostgreSQL and MariaDB: the serialized instance
round trip, listing per project, delete races, quota usage, and RequestSpec JSON."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest
import sqlalchemy as sa

from openkeel.db.engine import make_engine
from openkeel.db.repositories import build_requests, request_specs
from openkeel.db.schema import api as api_schema
from openkeel.domain.instances import (
    BuildRequestNotFound,
    FlavorSnapshot,
    Instance,
    RequestSpecNotFound,
)

FLAVOR = FlavorSnapshot(
    flavorid="42", name="m1.nano", memory_mb=128, vcpus=1, root_gb=1, extra_specs={"a": "b"}, id=3
)


@pytest.fixture
def api(db_url: str) -> Iterator[sa.Engine]:
    engine = make_engine(db_url)
    api_schema.metadata.create_all(engine)
    yield engine
    engine.dispose()


def instance(uuid: str, project_id: str = "p1", user_id: str = "u1", **kw: object) -> Instance:
    return Instance(
        uuid=uuid,
        project_id=project_id,
        user_id=user_id,
        flavor=FLAVOR,
        display_name=f"srv-{uuid}",
        vm_state="building",
        task_state="scheduling",
        metadata={"m": "1"},
        tags=("t1",),
        security_groups=("default",),
        created_at=datetime(2024, 1, 1, 0, 0, int(uuid[-1])),
        **kw,  # type: ignore[arg-type]
    )


def test_create_get_list_delete(api: sa.Engine) -> None:
    bdms = [{"boot_index": 0, "source_type": "image", "destination_type": "local"}]
    with api.begin() as conn:
        created = build_requests.create(conn, instance("b1"), block_device_mappings=bdms)
        build_requests.create(conn, instance("b2"))
        build_requests.create(conn, instance("b3", project_id="p2", user_id="u2"))
    assert created.instance == instance("b1")
    assert created.block_device_mappings == tuple(bdms)
    assert (created.tags, created.project_id) == (("t1",), "p1")
    with api.connect() as conn:
        assert build_requests.get(conn, "b2").instance.display_name == "srv-b2"
        assert [b.instance_uuid for b in build_requests.list_build_requests(conn, "p1")] == [
            "b2",
            "b1",
        ]
        assert len(build_requests.list_build_requests(conn)) == 3
        assert build_requests.find(conn, "zz") is None
        project, user = build_requests.count_usage(conn, "p1", "u1")
    assert project == user == {"instances": 2, "cores": 2, "ram": 256}
    with api.begin() as conn:
        renamed = Instance.from_primitive({**instance("b2").to_primitive(), "display_name": "x"})
        build_requests.update_instance(conn, renamed)
        assert build_requests.get(conn, "b2").instance.display_name == "x"
        build_requests.delete(conn, "b1")
        with pytest.raises(BuildRequestNotFound) as err:
            build_requests.delete(conn, "b1")
    assert (err.value.code, err.value.message) == (404, "BuildRequest not found for instance b1")


def test_request_spec_round_trip(api: sa.Engine) -> None:
    spec = request_specs.RequestSpec(
        instance_uuid="i1",
        project_id="p1",
        user_id="u1",
        flavor=FLAVOR,
        image={"id": "img", "min_ram": 0, "properties": {"hw_disk_bus": "virtio"}},
        num_instances=2,
        availability_zone="az1",
        scheduler_hints={"same_host": ["x"]},
        instance_group={"uuid": "g", "policy": "anti-affinity", "rules": {}, "members": []},
        requested_destination={"host": "h1", "node": None},
        ignore_hosts=("h9",),
        force_hosts=("h1",),
        security_groups=("default",),
    )
    with api.begin() as conn:
        request_specs.create(conn, spec)
    with api.connect() as conn:
        assert request_specs.get(conn, "i1") == spec
    retried = spec.replace(retry={"num_attempts": 2, "hosts": [["h1", "n1"]]})
    with api.begin() as conn:
        request_specs.save(conn, retried)
        assert request_specs.get(conn, "i1").retry == {"num_attempts": 2, "hosts": [["h1", "n1"]]}
        request_specs.delete(conn, "i1")
        with pytest.raises(RequestSpecNotFound) as err:
            request_specs.get(conn, "i1")
        with pytest.raises(RequestSpecNotFound):
            request_specs.save(conn, spec)
    assert err.value.message == "RequestSpec not found for instance i1"
