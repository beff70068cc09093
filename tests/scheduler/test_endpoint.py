"""The scheduler endpoint served on topic ``scheduler`` over the in-process transport, driven
through ``SchedulerRpcClient`` (select_destinations as a call, info updates as fanout casts)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from openkeel.domain.errors import NoValidHost
from openkeel.rpc.clients.scheduler import SchedulerRpcClient
from openkeel.rpc.inproc import InprocTransport
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.scheduler import (
    DeleteAggregate,
    DeleteInstanceInfo,
    SelectDestinations,
    SyncInstanceInfo,
    UpdateAggregates,
    UpdateInstanceInfo,
)
from openkeel.scheduler.endpoint import SchedulerEndpoint, serve
from tests.scheduler.conftest import CELL1, Cloud

CTX = CallContext(user_id="u1", project_id="p1")
DEADLINE = 5.0


def eventually(check: Callable[[], bool]) -> None:
    """Poll ``check`` until true (casts are asynchronous), failing after the deadline."""
    end = time.monotonic() + DEADLINE
    while not check():
        if time.monotonic() > end:
            pytest.fail("condition not reached before the deadline")
        time.sleep(0.01)


@pytest.fixture
def wired(cloud: Cloud) -> Iterator[tuple[SchedulerEndpoint, SchedulerRpcClient]]:
    for name in ("host1", "host2", "host3"):
        cloud.add_host(name)
    transport = InprocTransport(f"inproc://sched-{uuid.uuid4().hex}")
    endpoint = cloud.endpoint()
    server = serve(transport, endpoint, "scheduler-1")
    try:
        yield endpoint, SchedulerRpcClient(transport, timeout=DEADLINE)
    finally:
        server.stop()
        transport.close()


def flavor_spec(memory_mb: int, **extra: object) -> dict[str, object]:
    flavor = {"vcpus": 1, "memory_mb": memory_mb, "root_gb": 1, "ephemeral_gb": 0, "swap": 0}
    return {"flavor": flavor, "project_id": "p1", "user_id": "u1", **extra}


def test_select_destinations_is_a_call(
    wired: tuple[SchedulerEndpoint, SchedulerRpcClient], cloud: Cloud
) -> None:
    _, client = wired
    instance = str(uuid.uuid4())
    message = SelectDestinations(flavor_spec(512), (instance,), True, return_alternates=True)
    result = client.select_destinations(CTX, message)
    assert isinstance(result, list)
    (per_instance,) = result
    assert isinstance(per_instance, list) and len(per_instance) == 3
    chosen = per_instance[0]
    assert isinstance(chosen, dict)
    assert chosen["cell_uuid"] == CELL1
    assert sorted(chosen) == [
        "allocation_request",
        "allocation_request_version",
        "cell_uuid",
        "compute_node_uuid",
        "limits",
        "nodename",
        "service_host",
    ]
    assert cloud.host_of(instance) == chosen["service_host"]


def test_no_valid_host_crosses_rpc_as_itself(
    wired: tuple[SchedulerEndpoint, SchedulerRpcClient],
) -> None:
    _, client = wired
    with pytest.raises(NoValidHost) as caught:
        message = SelectDestinations(flavor_spec(99999), (str(uuid.uuid4()),), True)
        client.select_destinations(CTX, message)
    assert caught.value.message == "No valid host was found. "


def test_instance_info_casts_feed_the_affinity_cache(
    wired: tuple[SchedulerEndpoint, SchedulerRpcClient],
) -> None:
    endpoint, client = wired
    member, other = str(uuid.uuid4()), str(uuid.uuid4())
    client.fanout(CTX, UpdateInstanceInfo("host2", ({"uuid": member}, {"uuid": other})))
    eventually(lambda: endpoint.instance_map.on_host("host2") == {member, other})
    client.fanout(CTX, DeleteInstanceInfo("host2", other))
    eventually(lambda: endpoint.instance_map.on_host("host2") == {member})
    group = {"uuid": str(uuid.uuid4()), "policy": "affinity", "members": [member]}
    message = SelectDestinations(
        flavor_spec(64, instance_group=group), (str(uuid.uuid4()),), return_objects=True
    )
    result = client.select_destinations(CTX, message)
    assert isinstance(result, list) and isinstance(result[0], list)
    assert isinstance(result[0][0], dict) and result[0][0]["service_host"] == "host2"
    client.fanout(CTX, SyncInstanceInfo("host2", ()))
    eventually(lambda: endpoint.instance_map.on_host("host2") == frozenset())


def test_aggregate_casts_feed_the_zone_view(
    wired: tuple[SchedulerEndpoint, SchedulerRpcClient],
) -> None:
    endpoint, client = wired
    aggregate = {
        "id": 7,
        "uuid": str(uuid.uuid4()),
        "name": "agg",
        "hosts": ["host3"],
        "metadata": {"availability_zone": "az3"},
    }
    client.fanout(CTX, UpdateAggregates((aggregate,)))
    eventually(lambda: len(endpoint.aggregates.current()) == 1)
    message = SelectDestinations(flavor_spec(64, availability_zone="az3"), (str(uuid.uuid4()),))
    result = client.select_destinations(CTX, message)
    assert isinstance(result, list) and isinstance(result[0], dict)
    assert result[0]["host"] == "host3"
    client.fanout(CTX, DeleteAggregate(aggregate))
    eventually(lambda: endpoint.aggregates.current() == [])
