"""The instances/cores/ram quota claim of ``POST /servers`` with Nova's min/max count rules:
when ``max_count`` does not fit, as many as fit (at least ``min_count``) are created; otherwise
403 "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances".

Called by ``create.py``; yields the API-DB connection to insert the build rows into.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.domain.errors import OverQuota
from openkeel.domain.flavors import Flavor
from openkeel.domain.quotas import QuotaExceeded


class TooManyInstances(OverQuota):
    """Nova's TooManyInstances (403 in the API)."""

    def __init__(self, overs: list[str], req: list[str], used: list[str], allowed: list[str]):
        names = ", ".join(overs)
        super().__init__(
            f"Quota exceeded for {names}: Requested {', '.join(req)}, but already used "
            f"{', '.join(used)} of {', '.join(allowed)} {names}"
        )


def _deltas(flavor: Flavor, count: int) -> dict[str, int]:
    return {"instances": count, "cores": count * flavor.vcpus, "ram": count * flavor.memory_mb}


def headroom(
    quotas: Mapping[str, int], usages: Mapping[str, int], deltas: Mapping[str, int]
) -> dict[str, float]:
    """What is left per resource; an unlimited cores/ram follows the instances headroom."""
    room: dict[str, float] = {r: quotas[r] - usages.get(r, 0) for r in deltas if r in quotas}
    instances = room.get("instances", 1)
    per_instance = deltas.get("instances", 1) or 1
    for resource in ("cores", "ram"):
        if quotas.get(resource) == -1:
            room[resource] = (
                instances * deltas[resource] / per_instance if deltas.get(resource) else instances
            )
    return room


def _allowed(flavor: Flavor, room: Mapping[str, float]) -> int:
    allowed = room.get("instances", 1)
    if flavor.vcpus:
        allowed = min(allowed, room["cores"] // flavor.vcpus)
    if flavor.memory_mb:
        allowed = min(allowed, room["ram"] // flavor.memory_mb)
    return int(allowed)


def _refusal(
    err: QuotaExceeded, flavor: Flavor, min_count: int, max_count: int
) -> TooManyInstances:
    deltas = _deltas(flavor, max_count)
    room = headroom(err.quotas, err.usages, deltas)
    wanted = str(min_count) if min_count == max_count else f"{min_count}-{max_count}"
    requested = {"instances": wanted, "cores": str(deltas["cores"]), "ram": str(deltas["ram"])}
    overs = [r for r in err.overs if r in requested]
    return TooManyInstances(
        overs,
        [requested[r] for r in overs],
        [_number(err.quotas[r] - room[r]) for r in overs],
        [str(err.quotas[r]) for r in overs],
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


GROUP_FULL = "Quota exceeded, too many servers in group"


@contextmanager
def claim_instances(
    engine: QuotaEngine,
    ctx: RequestContext,
    flavor: Flavor,
    min_count: int,
    max_count: int,
    group_uuid: str | None = None,
) -> Iterator[tuple[sa.Connection, int]]:
    """Claim quota for as many servers as fit in [min_count, max_count]; yield (conn, count).

    With ``group_uuid`` the servers also count against ``server_group_members``.
    """
    count = max_count
    while True:
        deltas = _deltas(flavor, count)
        if group_uuid is not None:
            deltas["server_group_members"] = count
        try:
            with engine.claim(
                str(ctx.project_id), ctx.user_id, deltas, group_uuid=group_uuid
            ) as conn:
                yield conn, count
                return
        except QuotaExceeded as err:
            if "server_group_members" in err.overs and not set(err.overs) & set(_deltas(flavor, 1)):
                raise OverQuota(GROUP_FULL) from err
            room = headroom(err.quotas, err.usages, _deltas(flavor, count))
            allowed = _allowed(flavor, room)
            if count == max_count and min_count <= allowed < max_count:
                count = allowed
                continue
            raise _refusal(err, flavor, min_count, max_count) from err
