"""The embedded network service's rows on SQLite, PostgreSQL and MariaDB: address claims that
race, MAC uniqueness, one default security group per project, JSON columns, revisions."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from openkeel.db.engine import make_engine
from openkeel.db.network_store import NetworkStore
from openkeel.network.embedded.faults import NetworkFault
from openkeel.network.embedded.service import Caller, NetworkService

PRIVATE = {"id": "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001", "name": "private", "cidr": "10.0.0.0/28"}


@pytest.fixture
def service(db_url: str) -> Iterator[NetworkService]:
    engine = make_engine(db_url)
    store = NetworkStore(engine)
    store.install()
    store.install()  # idempotent
    made = NetworkService(store)
    made.bootstrap("admin", PRIVATE)
    made.bootstrap("admin", PRIVATE)  # idempotent
    yield made
    engine.dispose()


def test_racing_ports_get_distinct_addresses_until_the_pool_is_empty(
    service: NetworkService,
) -> None:
    caller = Caller("demo", False)
    got: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            port = service.create_port(caller, {"network_id": PRIVATE["id"]})
        except NetworkFault as fault:
            with lock:
                failures.append(fault.kind)
            return
        with lock:
            got.append(port["fixed_ips"][0]["ip_address"])

    threads = [threading.Thread(target=one) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A /28 has 13 addresses for ports (14 hosts less the gateway).
    assert len(got) == 13 and len(set(got)) == 13
    assert failures == ["IpAddressGenerationFailure"] * 3


def test_mac_taken_and_json_columns(service: NetworkService) -> None:
    caller = Caller("demo", False)
    port = service.create_port(
        caller,
        {
            "network_id": PRIVATE["id"],
            "mac_address": "fa:16:3e:00:00:01",
            "allowed_address_pairs": [{"ip_address": "10.0.0.99"}],
        },
    )
    assert port["allowed_address_pairs"] == [{"ip_address": "10.0.0.99"}]
    with pytest.raises(NetworkFault) as exc:
        service.create_port(
            caller, {"network_id": PRIVATE["id"], "mac_address": "fa:16:3e:00:00:01"}
        )
    assert exc.value.kind == "MacAddressInUse"
    # The failed port's address went back to the pool.
    again = service.create_port(caller, {"network_id": PRIVATE["id"]})
    assert again["fixed_ips"][0]["ip_address"] == "10.0.0.3"
    updated = service.update_port(caller, port["id"], {"name": "renamed"})
    assert updated["revision_number"] == 1 and updated["name"] == "renamed"


def test_one_default_group_per_project_even_when_racing(service: NetworkService) -> None:
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(service.default_security_group("p1")))
               for _ in range(6)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 1
    groups = service.store.list("security_groups", project_id="p1")
    assert [g["name"] for g in groups] == ["default"]
    assert len(service.rules_of(seen[0])) == 4
