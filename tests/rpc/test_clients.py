"""Role clients: typed messages sent under Nova's method names and versions, to the right
targets, with their fields as the wire arguments, on both transports."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from openkeel.rpc import CallContext, InvalidTarget, RpcServer, Target, UnsupportedVersion
from openkeel.rpc.clients import (
    ComputeRpcClient,
    ConductorRpcClient,
    SchedulerRpcClient,
    compute,
    conductor,
    scheduler,
)
from openkeel.rpc.message import Message
from openkeel.rpc.messages import compute as cm
from openkeel.rpc.messages import conductor as km
from openkeel.rpc.messages import scheduler as sm
from tests.rpc.conftest import Transports

CTX = CallContext(user_id="u1", project_id="p1", roles=("member",), request_id="req-9")
WAIT = 10.0


@dataclass(frozen=True)
class Instance:
    uuid: str
    host: str | None


class Recorder:
    """Endpoint that records every message it dispatches and answers ``result``."""

    def __init__(self, version: str, namespace: str | None = None, result: object = None) -> None:
        self.rpc_version = version
        self.rpc_namespace = namespace
        self.result = result
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.arrived = threading.Event()

    def __getattr__(self, name: str) -> Callable[..., object]:
        if name.startswith("_"):
            raise AttributeError(name)

        def record(context: CallContext, **args: Any) -> object:
            assert context == CTX
            self.received.append((name, args))
            self.arrived.set()
            return self.result

        return record

    def wait(self) -> list[tuple[str, dict[str, Any]]]:
        assert self.arrived.wait(WAIT)
        self.arrived.clear()
        return self.received


class VersionSpy(RpcServer):
    """Server that also records the version of each message."""

    versions: list[str]

    def dispatch(self, message: Message) -> object:
        self.versions.append(message["version"])
        return super().dispatch(message)


@pytest.fixture
def serve(
    transports: Transports, stoppers: list[Callable[[], None]]
) -> Callable[[Target, Recorder], VersionSpy]:
    def start(target: Target, endpoint: Recorder) -> VersionSpy:
        server = VersionSpy(transports.new(), target, [endpoint])
        server.versions = []
        stoppers.append(server.stop)
        server.start()
        return server

    return start


Serve = Callable[[Target, Recorder], VersionSpy]


def test_build_and_run_instance_casts_to_the_host(serve: Serve, transports: Transports) -> None:
    endpoint = Recorder(compute.SERVER_VERSION)
    other = Recorder(compute.SERVER_VERSION)
    server = serve(Target("compute", server="host2"), endpoint)
    serve(Target("compute", server="host1"), other)
    message = cm.BuildAndRunInstance(
        "i-1", request_spec={"num_instances": 1}, image={"id": "img"}, node="node2"
    )
    ComputeRpcClient(transports.new(), timeout=WAIT).cast(CTX, "host2", message)
    assert endpoint.wait() == [
        (
            "build_and_run_instance",
            {
                "instance_uuid": "i-1",
                "request_spec": {"num_instances": 1},
                "filter_properties": {},
                "requested_networks": [],
                "host_list": [],
                "image": {"id": "img"},
                "admin_password": None,
                "node": "node2",
            },
        )
    ]
    assert server.versions == ["6.0"]
    assert other.received == []


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (cm.TerminateInstance("i-1"), ("terminate_instance", {})),
        (cm.StartInstance("i-1"), ("start_instance", {})),
        (
            cm.StopInstance("i-1", clean_shutdown=False),
            ("stop_instance", {"clean_shutdown": False}),
        ),
        (cm.RebootInstance("i-1", "HARD"), ("reboot_instance", {"reboot_type": "HARD"})),
    ],
    ids=["terminate", "start", "stop", "reboot"],
)
def test_instance_messages_cast_to_the_instance_host(
    serve: Serve,
    transports: Transports,
    message: cm.InstanceMessage,
    expected: tuple[str, dict[str, object]],
) -> None:
    endpoint = Recorder(compute.SERVER_VERSION)
    server = serve(Target("compute", server="h1"), endpoint)
    client = ComputeRpcClient(transports.new(), timeout=WAIT)
    client.cast(CTX, compute.instance_host(Instance("i-1", "h1")), message)
    name, args = expected
    assert endpoint.wait() == [(name, {"instance_uuid": "i-1", **args})]
    assert server.versions == ["6.0"]


def test_a_compute_call_waits_for_the_answer(serve: Serve, transports: Transports) -> None:
    endpoint = Recorder(compute.SERVER_VERSION, result="done")
    serve(Target("compute", server="h1"), endpoint)
    client = ComputeRpcClient(transports.new(), timeout=WAIT)
    assert client.call(CTX, "h1", cm.StopInstance("i-1")) == "done"
    assert endpoint.received == [
        ("stop_instance", {"instance_uuid": "i-1", "clean_shutdown": True})
    ]


def test_compute_version_cap_by_release_alias(serve: Serve, transports: Transports) -> None:
    server = serve(Target("compute", server="h1"), Recorder("5.13"))
    client = ComputeRpcClient(transports.new(), version_cap="ussuri", timeout=WAIT)
    assert client.rpc.version_cap == "5.11"
    client.call(CTX, "h1", cm.StopInstance("i-1"))
    assert server.versions == ["5.0"]
    with pytest.raises(UnsupportedVersion) as raised:
        ComputeRpcClient(transports.new(), version_cap="queens").cast(
            CTX, "h1", cm.BuildAndRunInstance("i-1")
        )
    assert str(raised.value) == (
        "Cannot send build_and_run_instance: version cap 5.0 allows none of 6.0, 5.11"
    )


def test_instance_without_host_is_refused() -> None:
    with pytest.raises(InvalidTarget, match=r"^No compute host specified$"):
        compute.instance_host(Instance("i-1", None))


def test_select_destinations_calls_a_scheduler(serve: Serve, transports: Transports) -> None:
    hosts = [[{"service_host": "h1", "nodename": "n1"}]]
    endpoint = Recorder(scheduler.SERVER_VERSION, result=hosts)
    server = serve(Target("scheduler", server="s1"), endpoint)
    client = SchedulerRpcClient(transports.new(), timeout=WAIT)
    answer = client.select_destinations(CTX, sm.SelectDestinations({"num_instances": 1}, ("i-1",)))
    assert answer == hosts
    assert endpoint.received == [
        (
            "select_destinations",
            {
                "spec_obj": {"num_instances": 1},
                "instance_uuids": ["i-1"],
                "return_objects": False,
                "return_alternates": False,
            },
        )
    ]
    assert server.versions == ["4.5"]
    capped = SchedulerRpcClient(transports.new(), version_cap="4.4", timeout=WAIT)
    capped.select_destinations(CTX, sm.SelectDestinations({}, (), True, True))
    assert server.versions == ["4.5", "4.4"]


def test_update_instance_info_reaches_every_scheduler(serve: Serve, transports: Transports) -> None:
    endpoints = [Recorder(scheduler.SERVER_VERSION), Recorder(scheduler.SERVER_VERSION)]
    for number, endpoint in enumerate(endpoints):
        serve(Target("scheduler", server=f"s{number}"), endpoint)
    SchedulerRpcClient(transports.new()).fanout(
        CTX, sm.UpdateInstanceInfo("h1", ({"uuid": "i-1"},))
    )
    for endpoint in endpoints:
        assert endpoint.wait() == [
            ("update_instance_info", {"host_name": "h1", "instance_info": [{"uuid": "i-1"}]})
        ]


@pytest.mark.parametrize(("cap", "version"), [(None, "1.17"), ("1.16", "1.16")])
def test_schedule_and_build_instances(
    serve: Serve, transports: Transports, cap: str | None, version: str
) -> None:
    endpoint = Recorder(conductor.SERVER_VERSION, namespace="compute_task")
    server = serve(Target("conductor", server="c1"), endpoint)
    message = km.ScheduleAndBuildInstances(("i-1",), ({"num_instances": 1},), {"id": "img"}, "pw")
    ConductorRpcClient(transports.new(), version_cap=cap).cast(CTX, message)
    expected: dict[str, object] = {
        "instance_uuids": ["i-1"],
        "request_specs": [{"num_instances": 1}],
        "image": {"id": "img"},
        "admin_password": "pw",
        "requested_networks": None,
    }
    assert endpoint.wait() == [("schedule_and_build_instances", expected)]
    assert server.versions == [version]


@pytest.mark.parametrize(("cap", "carried"), [(None, True), ("1.18", False)])
def test_fields_newer_than_the_sent_version_are_left_out(
    serve: Serve, transports: Transports, cap: str | None, carried: bool
) -> None:
    endpoint = Recorder(conductor.SERVER_VERSION, namespace="compute_task")
    serve(Target("conductor", server="c1"), endpoint)
    message = km.BuildInstances(("i-1",), host_lists=(({"service_host": "h2"},),))
    ConductorRpcClient(transports.new(), version_cap=cap).cast(CTX, message)
    ((_, args),) = endpoint.wait()
    assert ("host_lists" in args) is carried
