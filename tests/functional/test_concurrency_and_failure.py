"""Racing for the last quota, and a compute host killed in the middle of builds."""

from __future__ import annotations

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
    assert len(accepted) == 10 and len(refused) == 10, [(a.status_code, a.text) for a in answers if a.status_code != 202]
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
    cloud.computes.pop(old_host).stop()
    cloud.roles.computes.clear()
    stuck = cloud.add_compute("phoenix", delays={"spawn": 1.0}, sleep=gate.sleep)
    created = [cloud.boot(f"doomed-{i}") for i in range(3)]
    assert gate.entered.wait(30), "no build reached the driver"
    stuck.stop()  # the compute role dies with builds in flight
    cloud.computes.pop("phoenix")
    cloud.roles.computes.remove(stuck)

    cloud.add_compute("phoenix")  # restarted on the same host: reconciles on start
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
