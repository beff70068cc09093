"""POST /os-server-external-events: per-event answers (200, 400 tag missing, 404 unknown
server, 422 no host; 207 when any failed), the event names of each microversion, the casts
to each host (source and destination of a migration too) and the instance actions Nova
records (responses checked against Nova's schemas by the conformance hook)."""

from __future__ import annotations

from typing import Any

import pytest

from openkeel.api.services import ApiServices
from openkeel.db.repositories import instance_actions, migrations
from openkeel.rpc.messages.compute import ExternalEvent, ExternalInstanceEvent
from tests.api.server_fakes import ADMIN, USER, Recorder, create, flavor, place
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

PATH = "/v2.1/os-server-external-events"
UNKNOWN = "9a7e1b4c-0000-4000-8000-000000000000"


def _post(api: ApiClient, events: list[dict[str, Any]], version: str = "2.1", token: str = ADMIN) -> Any:  # fmt: skip
    return api.post(PATH, json={"events": events}, token=token, version=version)


def _casts(compute: Recorder) -> list[tuple[str, list[ExternalEvent]]]:
    found = []
    for name, details in compute.calls:
        assert name == "external_instance_event"
        message: ExternalInstanceEvent = details["message"]
        found.append((details["host"], message.typed_events()))
    return found


def test_accepted_events_go_to_the_host(api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder]) -> None:  # fmt: skip
    _, compute = roles
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    events = [
        {"name": "network-vif-plugged", "server_uuid": sid, "tag": "port-1"},
        {"name": "network-changed", "server_uuid": sid, "status": "failed"},
    ]
    resp = _post(api, events)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"events": [
        {**events[0], "status": "completed", "code": 200},
        {**events[1], "status": "completed", "code": 200},
    ]}  # fmt: skip
    assert _casts(compute) == [("host1", [
        ExternalEvent(sid, "network-vif-plugged", "completed", "port-1"),
        ExternalEvent(sid, "network-changed", "failed", None),
    ])]  # fmt: skip


def test_failed_events_make_a_207(api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder]) -> None:  # fmt: skip
    _, compute = roles
    flavor(api)
    placed = create(api)["server"]["id"]
    place(services, placed)
    unscheduled = create(api)["server"]["id"]
    hostless = create(api)["server"]["id"]
    place(services, hostless, host=None, active=False)
    events = [
        {"name": "network-changed", "server_uuid": UNKNOWN},
        {"name": "volume-extended", "server_uuid": placed},  # no tag
        {"name": "network-changed", "server_uuid": hostless},
        {"name": "network-changed", "server_uuid": unscheduled},
        {"name": "network-vif-deleted", "server_uuid": placed, "tag": "p"},
    ]
    resp = _post(api, events, "2.51")
    assert resp.status_code == 207, resp.text
    codes = [(e["status"], e["code"]) for e in resp.json()["events"]]
    assert codes == [("failed", 404), ("failed", 400), ("failed", 422), ("failed", 404), ("completed", 200)]  # fmt: skip
    assert [h for h, _ in _casts(compute)] == ["host1"]
    none_found = _post(api, [{"name": "network-changed", "server_uuid": UNKNOWN}])
    assert none_found.status_code == 207
    assert none_found.json()["events"][0]["code"] == 404


@pytest.mark.parametrize(
    ("name", "since"),
    [("volume-extended", "2.51"), ("power-update", "2.76"),
     ("accelerator-request-bound", "2.82"), ("volume-reimaged", "2.93")],
)  # fmt: skip
def test_event_names_per_microversion(api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder], name: str, since: str) -> None:  # fmt: skip
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    event = {"name": name, "server_uuid": sid, "tag": "POWER_ON"}
    before = f"2.{int(since.split('.')[1]) - 1}"
    assert _post(api, [event], before).status_code == 400
    resp = _post(api, [event], since)
    assert resp.status_code == 200, resp.text
    assert _post(api, [event], "latest").status_code == 200


def test_schema_and_policy(api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder]) -> None:  # fmt: skip
    assert api.post(PATH, json={"events": []}, token=ADMIN).status_code == 400
    bad = [
        {"name": "network-changed"},
        {"name": "network-changed", "server_uuid": "nope"},
        {"name": "network-changed", "server_uuid": UNKNOWN, "status": "done"},
        {"name": "network-changed", "server_uuid": UNKNOWN, "tag": "x" * 256},
        {"name": "network-changed", "server_uuid": UNKNOWN, "extra": 1},
    ]
    for event in bad:
        assert _post(api, [event]).status_code == 400, event
    denied = _post(api, [{"name": "network-changed", "server_uuid": UNKNOWN}], token=USER)
    assert denied.status_code == 403


def test_actions_and_migrating_hosts(api: ApiClient, services: ApiServices, roles: tuple[Recorder, Recorder]) -> None:  # fmt: skip
    _, compute = roles
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        migrations.create(
            conn, instance_uuid=sid, migration_type="resize", status="migrating",
            source_compute="host1", dest_compute="host2", source_node="host1", dest_node="host2",
        )  # fmt: skip
    events = [
        {"name": "volume-extended", "server_uuid": sid, "tag": "vol-1"},
        {"name": "power-update", "server_uuid": sid, "tag": "POWER_OFF"},
        {"name": "power-update", "server_uuid": sid, "tag": "SIDEWAYS"},
    ]
    resp = _post(api, events, "2.76")
    assert resp.status_code == 200, resp.text
    casts = dict(_casts(compute))
    assert sorted(casts) == ["host1", "host2"]
    # The power-update to an unknown state is answered but not sent (as Nova).
    assert [e.key for e in casts["host2"]] == ["volume-extended-vol-1", "power-update-POWER_OFF"]
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        actions = sorted(a.action for a in instance_actions.list_actions(conn, sid))
    assert actions == ["extend_volume", "stop"]


def test_no_compute_service_reachable_is_a_503(api: ApiClient, services: ApiServices) -> None:
    services.compute = None
    flavor(api)
    sid = create(api)["server"]["id"]
    place(services, sid)
    event = {"name": "power-update", "server_uuid": sid, "tag": "POWER_ON"}
    resp = _post(api, [event], "2.76")
    assert resp.status_code == 503, resp.text
    with services.cell_dbs[CELL1_UUID].connect() as conn:
        assert instance_actions.list_actions(conn, sid) == []  # nothing half done
