"""PlacementClient against the real Placement service embedded in-process on SQLite."""

from __future__ import annotations

import threading
import uuid

import httpx
import pytest

from openkeel.clients import placement_errors as err
from openkeel.clients.placement import PlacementClient, connect_with_keystone
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.clients.placement_models import CandidateQuery, Inventory, ProviderResource

CN1 = "11111111-1111-4111-8111-111111111111"
CN2 = "22222222-2222-4222-8222-222222222222"
PROJECT = "p" * 32
USER = "u" * 32


def new_uuid() -> str:
    return str(uuid.uuid4())


def compute_node(client: PlacementClient, rp: str, name: str, vcpu: int, ratio: float) -> None:
    client.ensure_provider(rp, name)
    client.set_inventories(
        rp,
        {
            "VCPU": Inventory(total=vcpu, allocation_ratio=ratio),
            "MEMORY_MB": Inventory(total=4096, reserved=512, step_size=256, max_unit=2048),
            "DISK_GB": Inventory(total=100, min_unit=1, max_unit=50),
        },
    )


def test_provider_inventory_and_traits(placement: PlacementClient) -> None:
    created = placement.ensure_provider(CN1, "cn1")
    assert (created.uuid, created.name, created.generation) == (CN1, "cn1", 0)
    assert created.root_provider_uuid == CN1
    assert placement.ensure_provider(CN1, "cn1") == created
    inventories = {
        "VCPU": Inventory(total=8, reserved=1, max_unit=4, allocation_ratio=4.0),
        "MEMORY_MB": Inventory(total=8192, reserved=512, min_unit=256, step_size=256),
        "DISK_GB": Inventory(total=200, max_unit=100),
    }
    assert placement.set_inventories(CN1, inventories) == 1
    got = placement.get_inventories(CN1)
    assert got["VCPU"] == inventories["VCPU"]
    assert got["MEMORY_MB"] == Inventory(8192, 512, 256, 8192, 256, 1.0)
    assert got["DISK_GB"] == Inventory(200, 0, 1, 100, 1, 1.0)
    assert placement.set_traits(CN1, ["HW_CPU_X86_AVX2", "CUSTOM_GOLD"]) == 2
    assert placement.get_traits(CN1) == {"HW_CPU_X86_AVX2", "CUSTOM_GOLD"}
    aggregate = new_uuid()
    assert placement.set_aggregates(CN1, [aggregate]) == 3
    assert placement.get_aggregates(CN1) == {aggregate}
    assert placement.get_provider(CN1).generation == 3


def test_unknown_provider_is_typed_and_chained(placement: PlacementClient) -> None:
    with pytest.raises(err.ResourceProviderNotFound) as info:
        placement.get_provider(CN2)
    assert info.value.status == 404
    assert isinstance(info.value.__cause__, httpx.HTTPStatusError)
    assert f"No resource provider with uuid {CN2} found" in info.value.detail


def test_standard_trait_must_exist(placement: PlacementClient) -> None:
    placement.ensure_provider(CN1, "cn1")
    with pytest.raises(err.PlacementBadRequest) as info:
        placement.set_traits(CN1, ["HW_NOT_A_TRAIT"])
    assert "HW_NOT_A_TRAIT" in info.value.detail


def test_candidates_honour_capacity(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=4, ratio=1.0)
    compute_node(placement, CN2, "cn2", vcpu=8, ratio=2.0)
    big = placement.get_allocation_candidates(CandidateQuery({"VCPU": 6, "MEMORY_MB": 512}))
    assert [r.allocations for r in big.allocation_requests] == [
        {CN2: {"VCPU": 6, "MEMORY_MB": 512}}
    ]
    summary = big.provider_summaries[CN2]
    assert summary.resources["VCPU"] == ProviderResource(capacity=16, used=0)
    assert summary.resources["MEMORY_MB"] == ProviderResource(capacity=3584, used=0)
    small = placement.get_allocation_candidates(CandidateQuery({"VCPU": 2}))
    assert {rp for r in small.allocation_requests for rp in r.allocations} == {CN1, CN2}
    limited = placement.get_allocation_candidates(CandidateQuery({"VCPU": 2}, limit=1))
    assert len(limited.allocation_requests) == 1
    assert (
        placement.get_allocation_candidates(CandidateQuery({"VCPU": 17})).allocation_requests == ()
    )
    odd_step = CandidateQuery({"MEMORY_MB": 300})
    assert placement.get_allocation_candidates(odd_step).allocation_requests == ()


def test_candidates_honour_traits_aggregates_and_tree(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=4, ratio=1.0)
    compute_node(placement, CN2, "cn2", vcpu=4, ratio=1.0)
    placement.set_traits(CN2, ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"])
    aggregate = new_uuid()
    placement.set_aggregates(CN1, [aggregate])

    def hosts(query: CandidateQuery) -> set[str]:
        answer = placement.get_allocation_candidates(query)
        return {rp for r in answer.allocation_requests for rp in r.allocations}

    assert hosts(CandidateQuery({"VCPU": 1}, required_traits=("CUSTOM_GOLD",))) == {CN2}
    assert hosts(CandidateQuery({"VCPU": 1}, forbidden_traits=("CUSTOM_GOLD",))) == {CN1}
    assert hosts(CandidateQuery({"VCPU": 1}, member_of=((aggregate,),))) == {CN1}
    assert hosts(CandidateQuery({"VCPU": 1}, forbidden_aggregates=(aggregate,))) == {CN2}
    assert hosts(CandidateQuery({"VCPU": 1}, in_tree=CN2)) == {CN2}
    gold = placement.get_allocation_candidates(
        CandidateQuery({"VCPU": 1}, required_traits=("CUSTOM_GOLD",))
    )
    assert gold.provider_summaries[CN2].traits == {"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}


def test_claim_over_capacity_is_allocation_conflict(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=2, ratio=1.0)
    placement.claim(new_uuid(), {CN1: {"VCPU": 2}}, project_id=PROJECT, user_id=USER)
    with pytest.raises(err.AllocationConflict) as info:
        placement.claim(new_uuid(), {CN1: {"VCPU": 1}}, project_id=PROJECT, user_id=USER)
    assert info.value.status == 409
    assert "Unable to allocate inventory" in info.value.detail
    assert placement.get_provider_usages(CN1)["VCPU"] == 2


def test_race_for_last_capacity_has_exactly_one_winner(
    embedded_placement: EmbeddedPlacement, placement: PlacementClient
) -> None:
    compute_node(placement, CN1, "cn1", vcpu=2, ratio=1.0)
    consumers = [new_uuid(), new_uuid()]
    barrier = threading.Barrier(len(consumers))
    outcomes: dict[str, str] = {}

    def claim(consumer: str) -> None:
        client = embedded_placement.client(backoff=lambda attempt: None)
        barrier.wait(timeout=30)
        try:
            client.claim(consumer, {CN1: {"VCPU": 2}}, project_id=PROJECT, user_id=USER)
            outcomes[consumer] = "won"
        except err.AllocationConflict:
            outcomes[consumer] = "lost"
        finally:
            client.close()

    threads = [threading.Thread(target=claim, args=(c,)) for c in consumers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes.values()) == ["lost", "won"]
    winner = next(c for c, outcome in outcomes.items() if outcome == "won")
    assert placement.get_provider_allocations(CN1) == {winner: {"VCPU": 2}}


def test_consumer_generation_conflicts(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=4, ratio=1.0)
    consumer = new_uuid()
    placement.claim(consumer, {CN1: {"VCPU": 1}}, project_id=PROJECT, user_id=USER)
    current = placement.get_allocations(consumer)
    assert (current.generation, current.consumer_type) == (1, "INSTANCE")
    assert (current.project_id, current.user_id) == (PROJECT, USER)
    for stale in (None, 0):
        with pytest.raises(err.ConsumerGenerationConflict) as info:
            placement.claim(
                consumer,
                {CN1: {"VCPU": 2}},
                project_id=PROJECT,
                user_id=USER,
                consumer_generation=stale,
            )
        assert info.value.code == "placement.concurrent_update"
        assert "consumer generation conflict" in info.value.detail
    placement.claim(
        consumer, {CN1: {"VCPU": 2}}, project_id=PROJECT, user_id=USER, consumer_generation=1
    )
    assert placement.get_allocations(consumer).allocations == {CN1: {"VCPU": 2}}
    assert placement.get_usages(PROJECT) == {"VCPU": 2, "consumer_count": 1}
    assert placement.get_usages(PROJECT, consumer_type="MIGRATION") == {"consumer_count": 0}


def bumping_client(embedded: EmbeddedPlacement, times: int, pauses: list[int]) -> PlacementClient:
    """A client whose inventory PUTs race with another writer ``times`` times."""
    other = embedded.client()
    remaining = [times]

    def race(request: httpx.Request) -> None:
        if request.method == "PUT" and request.url.path.endswith("/inventories") and remaining[0]:
            remaining[0] -= 1
            other.set_traits(CN1, [f"CUSTOM_RACE_{remaining[0]}"])

    client = embedded.client(backoff=pauses.append)
    client._http.event_hooks["request"].append(race)
    return client


def test_provider_generation_conflict_is_retried(embedded_placement: EmbeddedPlacement) -> None:
    embedded_placement.client().ensure_provider(CN1, "cn1")
    pauses: list[int] = []
    client = bumping_client(embedded_placement, times=2, pauses=pauses)
    assert client.set_inventories(CN1, {"VCPU": Inventory(total=4)}) == 3
    assert pauses == [1, 2]
    assert client.get_inventories(CN1)["VCPU"].total == 4


def test_provider_generation_conflict_gives_up(embedded_placement: EmbeddedPlacement) -> None:
    embedded_placement.client().ensure_provider(CN1, "cn1")
    pauses: list[int] = []
    client = bumping_client(embedded_placement, times=10, pauses=pauses)
    with pytest.raises(err.ResourceProviderGenerationConflict) as info:
        client.set_inventories(CN1, {"VCPU": Inventory(total=4)})
    assert pauses == [1, 2, 3]
    assert isinstance(info.value.__cause__, httpx.HTTPStatusError)
    assert client.get_inventories(CN1) == {}


def test_move_allocations(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=4, ratio=1.0)
    instance, migration = new_uuid(), new_uuid()
    placement.claim(instance, {CN1: {"VCPU": 2, "DISK_GB": 10}}, project_id=PROJECT, user_id=USER)
    assert placement.move_allocations(instance, migration, target_consumer_type="MIGRATION")
    assert placement.get_allocations(instance).allocations == {}
    moved = placement.get_allocations(migration)
    assert moved.allocations == {CN1: {"VCPU": 2, "DISK_GB": 10}}
    assert (moved.consumer_type, moved.project_id, moved.user_id) == ("MIGRATION", PROJECT, USER)
    assert placement.move_allocations(instance, migration) is True  # already moved
    assert placement.move_allocations(new_uuid(), new_uuid()) is False
    usage = {"VCPU": 2, "DISK_GB": 10, "consumer_count": 1}
    assert placement.get_usages(PROJECT, USER, consumer_type="MIGRATION") == usage
    assert placement.get_usages(PROJECT, USER, consumer_type="INSTANCE") == {"consumer_count": 0}


def test_delete_allocations(placement: PlacementClient) -> None:
    compute_node(placement, CN1, "cn1", vcpu=4, ratio=1.0)
    guarded, forced = new_uuid(), new_uuid()
    for consumer in (guarded, forced):
        placement.claim(consumer, {CN1: {"VCPU": 1}}, project_id=PROJECT, user_id=USER)
    assert placement.delete_allocations(guarded) is True
    assert placement.delete_allocations(guarded) is False
    assert placement.delete_allocations(forced, force=True) is True
    assert placement.delete_allocations(forced, force=True) is False
    assert placement.get_provider_allocations(CN1) == {}
    assert placement.get_provider_usages(CN1) == {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}


def test_over_loopback_http(embedded_placement: EmbeddedPlacement) -> None:
    url = embedded_placement.serve_http()
    with httpx.Client(base_url=url, headers={"X-Auth-Token": "admin"}) as http:
        client = PlacementClient(http)
        client.ensure_provider(CN1, "cn1")
        assert [rp.uuid for rp in client.list_providers(name="cn1")] == [CN1]


def test_unreachable_and_5xx_are_unavailable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    down = PlacementClient(httpx.Client(transport=httpx.MockTransport(refuse), base_url="http://x"))
    with pytest.raises(err.PlacementUnavailable) as info:
        down.get_provider(CN1)
    assert isinstance(info.value.__cause__, httpx.ConnectError)

    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="maintenance")

    sick = PlacementClient(httpx.Client(transport=httpx.MockTransport(busy), base_url="http://x"))
    with pytest.raises(err.PlacementUnavailable) as busy_info:
        sick.get_provider(CN1)
    assert (busy_info.value.status, busy_info.value.detail) == (503, "maintenance")


class FakeKeystoneSession:
    """Stands in for keystoneauth1.session.Session: hands out tokens t1, t2, ..."""

    def __init__(self) -> None:
        self.issued = 0

    def get_token(self) -> str:
        self.issued += 1
        return f"t{self.issued}"

    def invalidate(self) -> None:
        """The next get_token re-authenticates."""

    def get_endpoint(self, **kwargs: object) -> str:
        assert kwargs == {
            "service_type": "placement",
            "interface": ["internal", "public"],
            "region_name": None,
        }
        return "http://catalog.placement"


def test_keystone_token_is_renewed_once_on_401(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    def placement_api(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers["X-Auth-Token"]))
        if request.headers["X-Auth-Token"] == "t1":
            return httpx.Response(401)
        return httpx.Response(
            200, json={"traits": ["CUSTOM_GOLD"], "resource_provider_generation": 1}
        )

    real_client = httpx.Client

    def mocked_client(**kwargs: object) -> httpx.Client:
        return real_client(transport=httpx.MockTransport(placement_api), **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx, "Client", mocked_client)
    client = connect_with_keystone(FakeKeystoneSession())
    assert client.get_traits(CN1) == {"CUSTOM_GOLD"}
    url = f"http://catalog.placement/resource_providers/{CN1}/traits"
    assert seen == [(url, "t1"), (url, "t2")]
