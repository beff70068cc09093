"""Typed client of Placement's REST API, for the scheduler, conductor and compute roles.

Speaks microversioned HTTP through an ``httpx.Client`` (a real endpoint, or the embedded
Placement of openkeel.clients.placement_embedded). Generation conflicts on providers are
retried by re-reading the generation; consumer generation conflicts are not (they mean
another writer changed the consumer), as Nova's report client does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from openkeel.clients import placement_errors as err
from openkeel.clients.placement_models import (
    AllocationCandidates,
    Allocations,
    CandidateQuery,
    ConsumerAllocations,
    Inventory,
    ResourceProvider,
)

DEFAULT_MICROVERSION = "1.39"
DEFAULT_ATTEMPTS = 4
T = TypeVar("T")


def jittered_backoff(attempt: int) -> None:
    """Default pause before retry ``attempt`` (1-based) after a provider generation conflict."""
    time.sleep(random.uniform(0, 0.05 * attempt))


class PlacementClient:
    """Placement's API as typed methods; raises only openkeel.clients.placement_errors."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        microversion: str = DEFAULT_MICROVERSION,
        attempts: int = DEFAULT_ATTEMPTS,
        backoff: Callable[[int], None] = jittered_backoff,
    ) -> None:
        self._http = http
        self._microversion = microversion
        self._attempts = attempts
        self._backoff = backoff

    def close(self) -> None:
        self._http.close()

    # -- transport -----------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Sequence[tuple[str, str]] | None = None,
    ) -> httpx.Response:
        headers = {"OpenStack-API-Version": f"placement {self._microversion}"}
        try:
            resp = self._http.request(
                method, path, json=json, params=tuple(params or ()), headers=headers
            )
        except httpx.TransportError as exc:
            raise err.PlacementUnavailable(f"Placement unreachable: {exc}") from exc
        try:
            resp.raise_for_status()
        except httpx.HTTPStatusError as exc:
            raise _translate(method, path, resp) from exc
        return resp

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = self._call(method, path, **kwargs).json()
        return body

    def _retrying(self, operation: Callable[[], T]) -> T:
        for attempt in range(1, self._attempts + 1):
            try:
                return operation()
            except err.ResourceProviderGenerationConflict:
                if attempt == self._attempts:
                    raise
                self._backoff(attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- resource providers --------------------------------------------------------------

    def get_provider(self, uuid: str) -> ResourceProvider:
        return ResourceProvider.from_json(self._json("GET", f"/resource_providers/{uuid}"))

    def create_provider(
        self, name: str, *, uuid: str | None = None, parent_uuid: str | None = None
    ) -> ResourceProvider:
        body: dict[str, Any] = {"name": name}
        if uuid is not None:
            body["uuid"] = uuid
        if parent_uuid is not None:
            body["parent_provider_uuid"] = parent_uuid
        return ResourceProvider.from_json(self._json("POST", "/resource_providers", json=body))

    def ensure_provider(
        self, uuid: str, name: str, *, parent_uuid: str | None = None
    ) -> ResourceProvider:
        """The provider ``uuid``, created if missing (a concurrent creator wins quietly)."""
        try:
            return self.get_provider(uuid)
        except err.ResourceProviderNotFound:
            pass
        try:
            return self.create_provider(name, uuid=uuid, parent_uuid=parent_uuid)
        except err.PlacementConflict:
            return self.get_provider(uuid)

    def list_providers(
        self, *, name: str | None = None, in_tree: str | None = None
    ) -> list[ResourceProvider]:
        params = [(k, v) for k, v in (("name", name), ("in_tree", in_tree)) if v is not None]
        body = self._json("GET", "/resource_providers", params=params)
        return [ResourceProvider.from_json(rp) for rp in body["resource_providers"]]

    def delete_provider(self, uuid: str) -> None:
        self._call("DELETE", f"/resource_providers/{uuid}")

    # -- inventories, traits, aggregates (generation-guarded) ----------------------------

    def get_inventories(self, uuid: str) -> dict[str, Inventory]:
        body = self._json("GET", f"/resource_providers/{uuid}/inventories")
        return {rc: Inventory.from_json(inv) for rc, inv in body["inventories"].items()}

    def set_inventories(self, uuid: str, inventories: Mapping[str, Inventory]) -> int:
        """Replace the provider's inventories; returns the new provider generation."""
        payload = {rc: inv.to_json() for rc, inv in inventories.items()}
        return self._guarded_put(uuid, "inventories", "inventories", payload)

    def get_traits(self, uuid: str) -> frozenset[str]:
        return frozenset(self._json("GET", f"/resource_providers/{uuid}/traits")["traits"])

    def set_traits(self, uuid: str, traits: Iterable[str]) -> int:
        """Replace the provider's traits, creating missing CUSTOM_ ones; returns generation."""
        wanted = sorted(set(traits))
        for name in wanted:
            if name.startswith("CUSTOM_"):
                self.ensure_trait(name)
        return self._guarded_put(uuid, "traits", "traits", wanted)

    def ensure_trait(self, name: str) -> None:
        self._call("PUT", f"/traits/{name}")

    def ensure_resource_class(self, name: str) -> None:
        self._call("PUT", f"/resource_classes/{name}")

    def get_aggregates(self, uuid: str) -> frozenset[str]:
        body = self._json("GET", f"/resource_providers/{uuid}/aggregates")
        return frozenset(body["aggregates"])

    def set_aggregates(self, uuid: str, aggregates: Iterable[str]) -> int:
        return self._guarded_put(uuid, "aggregates", "aggregates", sorted(set(aggregates)))

    def _guarded_put(self, uuid: str, sub: str, key: str, payload: Any) -> int:
        def attempt() -> int:
            generation = self.get_provider(uuid).generation
            body = {key: payload, "resource_provider_generation": generation}
            answer = self._json("PUT", f"/resource_providers/{uuid}/{sub}", json=body)
            new_generation: int = answer["resource_provider_generation"]
            return new_generation

        return self._retrying(attempt)

    # -- scheduling ------------------------------------------------------------------------

    def get_allocation_candidates(self, query: CandidateQuery) -> AllocationCandidates:
        body = self._json("GET", "/allocation_candidates", params=query.to_params())
        return AllocationCandidates.from_json(body)

    # -- allocations -----------------------------------------------------------------------

    def get_allocations(self, consumer: str) -> ConsumerAllocations:
        return ConsumerAllocations.from_json(self._json("GET", f"/allocations/{consumer}"))

    def get_provider_allocations(self, uuid: str) -> Allocations:
        """consumer uuid -> resource class -> amount, for one provider."""
        body = self._json("GET", f"/resource_providers/{uuid}/allocations")
        return {c: dict(a["resources"]) for c, a in body["allocations"].items()}

    def claim(
        self,
        consumer: str,
        allocations: Allocations,
        *,
        project_id: str,
        user_id: str,
        consumer_generation: int | None = None,
        consumer_type: str = "INSTANCE",
    ) -> None:
        """Write ``consumer``'s allocations (None generation: a new consumer).

        Raises AllocationConflict when it does not fit, ConsumerGenerationConflict when the
        consumer changed meanwhile; provider generation races inside Placement are retried.
        """
        payload = {
            "allocations": _allocations_json(allocations),
            "project_id": project_id,
            "user_id": user_id,
            "consumer_generation": consumer_generation,
            "consumer_type": consumer_type,
        }
        self._retrying(lambda: self._call("PUT", f"/allocations/{consumer}", json=payload))

    def delete_allocations(self, consumer: str, *, force: bool = False) -> bool:
        """Remove all of ``consumer``'s allocations; False when it had none.

        Without ``force`` the removal is guarded by the consumer generation read first.
        """
        if force:
            try:
                self._call("DELETE", f"/allocations/{consumer}")
            except err.PlacementNotFound:
                return False
            return True
        current = self.get_allocations(consumer)
        if not current.allocations:
            return False
        payload: dict[str, Any] = {
            "allocations": {},
            "project_id": current.project_id,
            "user_id": current.user_id,
            "consumer_generation": current.generation,
            "consumer_type": current.consumer_type or "INSTANCE",
        }
        self._retrying(lambda: self._call("PUT", f"/allocations/{consumer}", json=payload))
        return True

    def change_allocations(self, consumer: str, delta: Allocations, *, sign: int = 1) -> None:
        """Add (``sign`` 1) or take away (-1) ``delta`` to/from ``consumer``'s allocations,
        guarded by its generation (Nova's ``add_resources_to_instance_allocation`` /
        ``remove_resources_from_instance_allocation``); AllocationConflict when it does not
        fit, ConsumerGenerationConflict when the consumer changed meanwhile."""
        current = self.get_allocations(consumer)
        merged = {rp: dict(amounts) for rp, amounts in current.allocations.items()}
        for rp, amounts in delta.items():
            held = merged.setdefault(rp, {})
            for rc, amount in amounts.items():
                held[rc] = held.get(rc, 0) + sign * amount
        cleaned = {
            rp: {rc: n for rc, n in amounts.items() if n > 0} for rp, amounts in merged.items()
        }
        payload = {
            "allocations": _allocations_json({rp: a for rp, a in cleaned.items() if a}),
            "project_id": current.project_id,
            "user_id": current.user_id,
            "consumer_generation": current.generation,
            "consumer_type": current.consumer_type or "INSTANCE",
        }
        self._retrying(lambda: self._call("PUT", f"/allocations/{consumer}", json=payload))

    def move_allocations(
        self, source: str, target: str, *, target_consumer_type: str | None = None
    ) -> bool:
        """Move everything ``source`` holds to ``target`` atomically (migrations).

        True when moved or already moved (source empty, target not); False when both empty.
        """
        src = self.get_allocations(source)
        dst = self.get_allocations(target)
        if not src.allocations:
            return bool(dst.allocations)
        src_type = src.consumer_type or "INSTANCE"
        owner = {"project_id": src.project_id, "user_id": src.user_id}
        payload = {
            source: {
                "allocations": {},
                "consumer_generation": src.generation,
                "consumer_type": src_type,
                **owner,
            },
            target: {
                "allocations": _allocations_json(src.allocations),
                "consumer_generation": dst.generation,
                "consumer_type": target_consumer_type or dst.consumer_type or src_type,
                **owner,
            },
        }
        self._retrying(lambda: self._call("POST", "/allocations", json=payload))
        return True

    # -- usages ----------------------------------------------------------------------------

    def get_usages(
        self, project_id: str, user_id: str | None = None, *, consumer_type: str = "all"
    ) -> dict[str, int]:
        """Resource class -> amount used by a project (and user) plus ``consumer_count``.

        ``consumer_type`` "all" sums every type, "unknown" is consumers without a type.
        """
        params = [("project_id", project_id), ("consumer_type", consumer_type)]
        if user_id is not None:
            params.append(("user_id", user_id))
        groups: dict[str, dict[str, int]] = self._json("GET", "/usages", params=params)["usages"]
        return groups.get(consumer_type, {"consumer_count": 0})

    def get_provider_usages(self, uuid: str) -> dict[str, int]:
        usages: dict[str, int] = self._json("GET", f"/resource_providers/{uuid}/usages")["usages"]
        return usages


class KeystoneTokenAuth(httpx.Auth):
    """Authenticates with a keystoneauth1 ``Session``'s token; re-authenticates once on 401."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["X-Auth-Token"] = self._session.get_token()
        response = yield request
        if response.status_code == 401:
            self._session.invalidate()
            request.headers["X-Auth-Token"] = self._session.get_token()
            yield request


def connect_with_keystone(
    session: Any,
    *,
    endpoint_override: str | None = None,
    interfaces: Sequence[str] = ("internal", "public"),
    region_name: str | None = None,
    timeout: float = 30.0,
) -> PlacementClient:
    """A client for a real Placement: the endpoint from ``endpoint_override`` or the catalog."""
    endpoint = endpoint_override or session.get_endpoint(
        service_type="placement", interface=list(interfaces), region_name=region_name
    )
    if not endpoint:
        raise err.PlacementUnavailable("No placement endpoint in the service catalog")
    http = httpx.Client(base_url=endpoint, auth=KeystoneTokenAuth(session), timeout=timeout)
    return PlacementClient(http)


def _allocations_json(allocations: Allocations) -> dict[str, Any]:
    return {rp: {"resources": dict(res)} for rp, res in allocations.items()}


def _translate(method: str, path: str, resp: httpx.Response) -> err.PlacementError:
    code, detail = _first_error(resp)
    status = resp.status_code
    message = f"Placement {method} {path} answered {status}: {detail}"
    kwargs: dict[str, Any] = {"status": status, "code": code, "detail": detail}
    if status >= 500:
        return err.PlacementUnavailable(message, **kwargs)
    if status == 404:
        is_rp = path.startswith("/resource_providers/") and "resource provider" in detail.lower()
        cls: type[err.PlacementError] = (
            err.ResourceProviderNotFound if is_rp else err.PlacementNotFound
        )
        return cls(message, **kwargs)
    if status == 409:
        return _conflict_class(method, path, code, detail)(message, **kwargs)
    if status == 400:
        return err.PlacementBadRequest(message, **kwargs)
    return err.PlacementError(message, **kwargs)


def _conflict_class(method: str, path: str, code: str, detail: str) -> type[err.PlacementError]:
    if code == err.CONCURRENT_UPDATE:
        if err.CONSUMER_GENERATION_MARKER in detail:
            return err.ConsumerGenerationConflict
        return err.ResourceProviderGenerationConflict
    if code == "placement.inventory.inuse":
        return err.InventoryInUse
    if path.startswith("/allocations") and method in ("PUT", "POST"):
        return err.AllocationConflict
    return err.PlacementConflict


def _first_error(resp: httpx.Response) -> tuple[str, str]:
    try:
        first = resp.json()["errors"][0]
        return str(first.get("code", "")), str(first.get("detail", ""))
    except (ValueError, KeyError, IndexError, TypeError):
        return "", resp.text
