"""Typed RPC messages: every message survives its wire form, a received message tolerates a
newer minor version's extra arguments and refuses a missing required one, and every role
endpoint serves exactly its messages, each method taking its message class."""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from openkeel.compute.endpoint import ComputeEndpoint
from openkeel.conductor.endpoint import ComputeTaskEndpoint
from openkeel.rpc import CallContext, RpcServer, Target
from openkeel.rpc.client import RpcClient
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages import compute as cm
from openkeel.rpc.messages import conductor as km
from openkeel.rpc.messages import scheduler as sm
from openkeel.scheduler.endpoint import SchedulerEndpoint
from tests.rpc.conftest import Transports

ALL = [*cm.MESSAGES.values(), *km.MESSAGES.values(), *sm.MESSAGES.values()]


def _sample(cls: type[RpcMessage]) -> RpcMessage:
    """A message with every field set to a non-default value of its type."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        hint = str(hints[field.name])
        if "tuple[tuple" in hint:
            values[field.name] = (({"host": "h1"},),)
        elif "tuple[str" in hint:
            values[field.name] = ("u-1", "u-2")
        elif "tuple" in hint:
            values[field.name] = ({"k": "v"},)
        elif "Mapping" in hint:
            values[field.name] = {"k": [1, "two"]}
        elif "bool" in hint:
            values[field.name] = field.default is not True
        elif "int" in hint:
            values[field.name] = 7
        else:
            values[field.name] = f"{field.name}-value"
    return cls(**values)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.method)
def test_a_message_survives_its_wire_form(cls: type[RpcMessage]) -> None:
    message = _sample(cls)
    wire = json.loads(json.dumps(message.to_args(cls.versions[0])))
    assert cls.from_args(wire) == message


def test_extra_arguments_are_ignored_and_missing_required_ones_refused() -> None:
    args = {"instance_uuid": "u-1", "clean_shutdown": False, "added_in_6_9": 1}
    assert cm.StopInstance.from_args(args) == cm.StopInstance("u-1", clean_shutdown=False)
    with pytest.raises(TypeError):
        cm.StopInstance.from_args({"clean_shutdown": False})


@pytest.mark.parametrize(
    ("endpoint", "messages"),
    [
        (ComputeEndpoint, cm.MESSAGES),
        (ComputeTaskEndpoint, km.MESSAGES),
        (SchedulerEndpoint, sm.MESSAGES),
    ],
    ids=["compute", "conductor", "scheduler"],
)
def test_each_endpoint_serves_exactly_its_messages(
    endpoint: type[object], messages: Mapping[str, type[RpcMessage]]
) -> None:
    assert endpoint.rpc_messages is messages
    public = {
        name
        for name, member in inspect.getmembers(endpoint, inspect.isfunction)
        if not name.startswith("_") and name != "from_conf"
    }
    assert public == set(messages)
    for name, cls in messages.items():
        hints = typing.get_type_hints(getattr(endpoint, name))
        assert hints["msg"] is cls, name


class _Typed:
    rpc_version: ClassVar[str] = "1.0"
    rpc_messages: ClassVar[Mapping[str, type[RpcMessage]]] = {"stop_instance": cm.StopInstance}

    def __init__(self) -> None:
        self.got: list[object] = []

    def stop_instance(self, context: CallContext, msg: cm.StopInstance) -> str:
        self.got.append(msg)
        return msg.instance_uuid


def test_the_server_hands_a_typed_endpoint_its_message(transports: Transports) -> None:
    endpoint = _Typed()
    server = RpcServer(transports.new(), Target("typed", server="h1"), [endpoint]).start()
    try:
        client = RpcClient(transports.new(), Target("typed", server="h1", version="1.0"))
        answer = client.call(CallContext(), "stop_instance", instance_uuid="u-9")
    finally:
        server.stop()
    assert answer == "u-9"
    assert endpoint.got == [cm.StopInstance("u-9")]
