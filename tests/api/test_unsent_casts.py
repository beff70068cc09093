"""A cast the API cannot send (broker down) leaves the server as it was and answers 503.

The API saves the task state, then casts; when the cast cannot leave, nothing would ever clear
that task state. openkeel.api.usecases.sending undoes it and names the outage (issue 7).
"""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.rpc.errors import MessagingError, RemoteError
from tests.api.server_fakes import ADMIN, USER, create, flavor, host_up, place, wire
from tests.client import ApiClient


class Unsendable:
    """A compute/conductor RPC client whose every cast fails to leave (or, with ``remote``,
    arrives and fails on the other side)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def send(*_args: Any, **_kwargs: Any) -> None:
            raise self.error

        return send


def _server(api: ApiClient, services: ApiServices) -> str:
    flavor(api)
    wire(services)
    server_id = str(create(api)["server"]["id"])
    place(services, server_id)
    return server_id


def _task_state(api: ApiClient, server_id: str) -> Any:
    server = api.get(f"/v2.1/servers/{server_id}", token=ADMIN).json()["server"]
    return server["OS-EXT-STS:task_state"]


@pytest.mark.parametrize(
    "action",
    [{"os-stop": None}, {"reboot": {"type": "HARD"}}, {"pause": None}, {"lock": None}],
    ids=["os-stop", "reboot", "pause", "lock"],
)
def test_an_unsent_cast_is_undone_and_answers_503(
    api: ApiClient, services: ApiServices, action: dict[str, Any]
) -> None:
    server_id = _server(api, services)
    broken = MessagingError("Cannot publish to RabbitMQ: [Errno 111] Connection refused")
    services.compute = services.conductor = Unsendable(broken)  # type: ignore[assignment]
    resp = api.post(f"/v2.1/servers/{server_id}/action", json=action, token=USER)
    if "lock" in action:  # no cast: unaffected by the outage
        assert resp.status_code == 202, resp.text
        return
    assert resp.status_code == 503, resp.text
    fault = resp.json()["serviceUnavailable"]
    assert "could not be sent" in fault["message"] and "Connection refused" in fault["message"]
    assert _task_state(api, server_id) is None  # not stuck: the user may try again
    wire(services)  # the broker is back
    again = api.post(f"/v2.1/servers/{server_id}/action", json=action, token=USER)
    assert again.status_code == 202, again.text


def test_an_unsent_delete_leaves_the_server_deletable(
    api: ApiClient, services: ApiServices
) -> None:
    server_id = _server(api, services)
    host_up(services)  # else the API deletes locally, without a cast
    broken = MessagingError("Cannot publish to RabbitMQ: connection reset")
    services.compute = Unsendable(broken)  # type: ignore[assignment]
    resp = api.delete(f"/v2.1/servers/{server_id}", token=USER)
    assert resp.status_code == 503, resp.text
    assert _task_state(api, server_id) is None
    _, compute = wire(services)
    assert api.delete(f"/v2.1/servers/{server_id}", token=USER).status_code == 204
    assert compute.names() == ["terminate_instance"]


def test_a_remote_failure_is_not_undone(api: ApiClient, services: ApiServices) -> None:
    """A RemoteError is the other role's failure after delivery: a 500, task state kept for
    the role that owns it."""
    server_id = _server(api, services)
    services.compute = Unsendable(RemoteError("Boom", "boom", []))  # type: ignore[assignment]
    resp = api.post(f"/v2.1/servers/{server_id}/action", json={"os-stop": None}, token=USER)
    assert resp.status_code == 500, resp.text
    assert _task_state(api, server_id) == "powering-off"
