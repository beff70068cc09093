"""The scheduler wired with an API DB: aggregates and server group members come from it
(no casts needed), and instance locations from the cell DB; cell0 is never a candidate."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.db.repositories.aggregates import AggregateRepository
from openkeel.db.repositories.server_groups import ServerGroupRepository
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from openkeel.domain.server_groups import ServerGroup
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.scheduler import SelectDestinations
from openkeel.scheduler.endpoint import SchedulerEndpoint
from tests.conftest import CELL1_UUID
from tests.scheduler.conftest import Cloud

CTX = CallContext(user_id="u1", project_id="p1")


@pytest.fixture
def wired(
    services: ApiServices, embedded_placement: EmbeddedPlacement
) -> Iterator[tuple[Cloud, SchedulerEndpoint]]:
    cloud = Cloud(embedded_placement.client(), services.cell_dbs[CELL1_UUID])
    for name in ("host1", "host2", "host3"):
        cloud.add_host(name)
    endpoint = SchedulerEndpoint.from_conf(
        services.conf,
        cloud.placement,
        services.cell_dbs,
        api_db=services.api_db,
        clock=lambda: cloud.now,
        rng=random.Random(3),
    )
    try:
        yield cloud, endpoint
    finally:
        cloud.cleanup()
        cloud.placement.close()


def select(endpoint: SchedulerEndpoint, **spec: object) -> str:
    flavor = {"vcpus": 1, "memory_mb": 128, "root_gb": 1}
    result = endpoint.select_destinations(
        CTX,
        SelectDestinations(
            {"flavor": flavor, **spec},
            tuple([str(uuid.uuid4())]),
            return_objects=True,
        ),
    )
    assert isinstance(result[0][0], dict)
    return str(result[0][0]["service_host"])


def test_zone_from_the_api_db_without_casts(
    wired: tuple[Cloud, SchedulerEndpoint], services: ApiServices
) -> None:
    _, endpoint = wired
    aggregates = AggregateRepository(services.api_db)
    created = aggregates.create("edge", str(uuid.uuid4()), {"availability_zone": "edge"})
    aggregates.add_host(created.id, "host1")
    assert select(endpoint, availability_zone="edge") == "host1"


def test_group_members_from_the_api_db_and_hosts_from_the_cell(
    wired: tuple[Cloud, SchedulerEndpoint], services: ApiServices
) -> None:
    cloud, endpoint = wired
    member = str(uuid.uuid4())
    with cloud.cell.begin() as conn:
        conn.execute(sa.insert(cell_schema.instances).values(uuid=member, host="host2", deleted=0))
    group = ServerGroup(
        uuid=str(uuid.uuid4()), name="g", project_id="p1", user_id="u1", policy="affinity"
    )
    with services.api_db.begin() as conn:
        ServerGroupRepository.create(conn, group, legacy_policy=False)
        group_id = conn.execute(
            sa.select(api_schema.instance_groups.c.id).where(
                api_schema.instance_groups.c.uuid == group.uuid
            )
        ).scalar_one()
        conn.execute(
            sa.insert(api_schema.instance_group_member).values(
                group_id=group_id, instance_uuid=member
            )
        )
    spec_group = {"uuid": group.uuid, "policy": "affinity", "members": []}
    assert select(endpoint, instance_group=spec_group) == "host2"
    anti = {**spec_group, "policy": "anti-affinity"}
    assert select(endpoint, instance_group=anti) != "host2"
