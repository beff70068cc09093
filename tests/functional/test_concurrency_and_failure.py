"""Racing for the last quota, and a compute host killed in the middle of builds."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.functional.conftest import IMAGE, Cloud, Gate


def _create(cloud: Cloud, index: int) -> Any:
    body = {"server": {"name": f"race-{index}", "imageRef": IMAGE, "flavorRef": "1",
                       "networks": "none"}}  # fmt: skip
    return cloud.api.post("/v2.1/servers", body, version="2.37", token="demo:demo")


def test_twenty_parallel_creates_against_a_quota_of_ten(cloud: Cloud) -> None:
    quota = {"quota_set": {"instances": 10}}
    assert cloud.api.put("/v2.1/os-quota-sets/demo", quota).status_code == 200
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda i: _create(cloud, i), range(20)))
    accepted = [a for a in answers if a.status_code == 202]
    refused = [a for a in answers if a.status_code == 403]
    assert len(accepted) == 10 and len(refused) == 10, [
        (a.status_code, a.text) for a in answers if a.status_code != 202
    ]
    for answer in refused:
        message = answer.json()["forbidden"]["message"]
        assert message.startswith("Quota exceeded for instances: Requested 1, but already used")
    for answer in accepted:
        assert cloud.wait(answer.json()["server"]["id"])["status"] == "ACTIVE"
    assert cloud.usage()["VCPU"] == 10


def test_compute_killed_mid_build_leaves_nothing_in_transition(cloud: Cloud) -> None:
    gate = Gate()
    cloud.gates.append(gate)
    (old_host,) = cloud.computes
    service = cloud.api.get(f"/v2.1/os-services?host={old_host}", version="2.53").json()
    service_id = service["services"][0]["id"]
    disable = {"status": "disabled", "disabled_reason": "out of the way"}
    assert (
        cloud.api.put(f"/v2.1/os-services/{service_id}", disable, version="2.53").status_code == 200
    )
    phoenix = f"phoenix-{uuid.uuid4().hex[:6]}"  # Placement outlives the test: unique names
    stuck = cloud.add_compute(phoenix, delays={"spawn": 1.0}, sleep=gate.sleep)
    created = [cloud.boot(f"doomed-{i}") for i in range(3)]
    assert gate.entered.wait(30), "no build reached the driver"
    stuck.stop(drain=False)  # the compute role dies with builds in flight
    cloud.computes.pop(phoenix)
    cloud.roles.computes.remove(stuck)
    assert all(  # nothing finished while the role was down
        cloud.api.get(f"/v2.1/servers/{s['id']}").json()["server"]["status"] == "BUILD"
        for s in created
    )

    cloud.add_compute(phoenix)  # restarted on the same host: reconciles on start
    servers = [cloud.wait(s["id"]) for s in created]
    for server in servers:
        assert server["status"] in ("ERROR", "ACTIVE"), server["status"]
        assert server["OS-EXT-STS:task_state"] is None
    for server in servers:
        assert cloud.api.delete(f"/v2.1/servers/{server['id']}").status_code == 204
    for server in servers:
        cloud.wait(server["id"], gone=True)
    assert cloud.usage() == {}
    gate.release()
