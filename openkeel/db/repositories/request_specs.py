"""Request specs (API DB ``request_specs``): what the scheduler needs to place an instance.

The servers API stores one per instance with its build request; conductor and the scheduler
read it (``select_destinations``), and later moves (resize, migrate, evacuate, unshelve)
update it. ``RequestSpec`` is also what goes over RPC (``to_primitive``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.schema import api as api_schema
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import FlavorSnapshot, RequestSpecNotFound

_R = api_schema.request_specs


@dataclass(frozen=True)
class RequestSpec:
    """Nova's RequestSpec, JSON-friendly.

    ``image`` is the image metadata dict (id, name, min_ram, min_disk, properties, ...);
    ``scheduler_hints`` maps hint names to lists of strings; ``instance_group`` is
    {uuid, name, policy, rules, members, hosts} or None; ``requested_destination`` is
    {host, node, cell_uuid, aggregates, allow_cross_cell_move} or None; ``retry`` is
    {num_attempts, hosts: [[host, node], ...]} or None.
    """

    instance_uuid: str
    project_id: str
    user_id: str
    flavor: FlavorSnapshot
    image: Mapping[str, Any] = field(default_factory=dict)
    num_instances: int = 1
    availability_zone: str | None = None
    scheduler_hints: Mapping[str, list[str]] = field(default_factory=dict)
    instance_group: Mapping[str, Any] | None = None
    requested_destination: Mapping[str, Any] | None = None
    ignore_hosts: tuple[str, ...] = ()
    force_hosts: tuple[str, ...] = ()
    force_nodes: tuple[str, ...] = ()
    security_groups: tuple[str, ...] = ()
    is_bfv: bool = False
    retry: Mapping[str, Any] | None = None
    requested_networks: tuple[Mapping[str, Any], ...] = ()
    requested_resources: tuple[Mapping[str, Any], ...] = ()
    request_level_params: Mapping[str, Any] = field(default_factory=dict)
    network_metadata: Mapping[str, Any] | None = None
    limits: Mapping[str, Any] | None = None

    def to_primitive(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["flavor"] = self.flavor.to_primitive()
        result: dict[str, Any] = json.loads(json.dumps(data, default=_json_default))
        return result

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> RequestSpec:
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name == "flavor":
                value = FlavorSnapshot.from_primitive(value)
            elif isinstance(value, list) and f.name not in ("scheduler_hints",):
                value = tuple(value)
            values[f.name] = value
        return cls(**values)

    def replace(self, **changes: Any) -> RequestSpec:
        return dataclasses.replace(self, **changes)


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


_INSERT_SQL = sa.insert(_R)
_GET_SQL = sa.select(_R.c.spec).where(_R.c.instance_uuid == sa.bindparam("uuid"))


def create(conn: sa.Connection, spec: RequestSpec) -> RequestSpec:
    add(conn, [spec.to_primitive()])
    return spec


def add(conn: sa.Connection, primitives: Sequence[Mapping[str, Any]]) -> None:
    """Store specs given in their wire form (``RequestSpec.to_primitive()``), in one statement."""
    now = utcnow()
    rows = [
        {"instance_uuid": p["instance_uuid"], "spec": json.dumps(p), "created_at": now}
        for p in primitives
    ]
    if rows:
        conn.execute(_INSERT_SQL, rows)


def get(conn: sa.Connection, instance_uuid: str) -> RequestSpec:
    """The instance's spec; ``RequestSpecNotFound`` (404) if none."""
    text = conn.execute(_GET_SQL, {"uuid": instance_uuid}).scalar()
    if text is None:
        raise RequestSpecNotFound(instance_uuid)
    return RequestSpec.from_primitive(json.loads(text))


def save(conn: sa.Connection, spec: RequestSpec) -> None:
    """Overwrite the stored spec of ``spec.instance_uuid``."""
    result = conn.execute(
        sa.update(_R)
        .where(_R.c.instance_uuid == spec.instance_uuid)
        .values(spec=json.dumps(spec.to_primitive()), updated_at=utcnow())
    )
    if result.rowcount == 0:
        raise RequestSpecNotFound(spec.instance_uuid)


def delete(conn: sa.Connection, instance_uuid: str) -> None:
    conn.execute(sa.delete(_R).where(_R.c.instance_uuid == instance_uuid))
