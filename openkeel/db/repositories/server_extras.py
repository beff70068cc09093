"""Read-only batch queries the servers API views need beside the instance rows: attached
volumes (cell DB ``block_device_mapping``), server group membership (API DB) and compute
services by host (cell DB). One statement per call whatever the number of servers.

Called by ``openkeel.api.usecases.servers.gathering``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.db.schema.columns import utcnow

_BDM = cell_tables.block_device_mapping
_GROUPS, _MEMBERS = api_tables.instance_groups, api_tables.instance_group_member
_SVC = cell_tables.services
_SPECS = api_tables.request_specs
_KEYS: sa.BindParameter[list[str]] = sa.bindparam("keys", expanding=True)

# Built once: building a statement costs more than running it on a one-server read.
_VOLUMES_SQL = (
    sa.select(_BDM.c.instance_uuid, _BDM.c.volume_id, _BDM.c.delete_on_termination)
    .where(_BDM.c.instance_uuid.in_(_KEYS), _BDM.c.deleted == 0, _BDM.c.volume_id.is_not(None))
    .order_by(_BDM.c.id)
)
_GROUPS_SQL = (
    sa.select(_MEMBERS.c.instance_uuid, _GROUPS.c.uuid)
    .select_from(_MEMBERS.join(_GROUPS, _GROUPS.c.id == _MEMBERS.c.group_id))
    .where(_MEMBERS.c.instance_uuid.in_(_KEYS))
)
_SERVICES_SQL = sa.select(
    _SVC.c.host,
    _SVC.c.forced_down,
    _SVC.c.disabled,
    _SVC.c.last_seen_up,
    _SVC.c.created_at,
    _SVC.c.updated_at,
).where(_SVC.c.host.in_(_KEYS), _SVC.c.binary == "nova-compute", _SVC.c.deleted == 0)
_SPECS_SQL = sa.select(_SPECS.c.instance_uuid, _SPECS.c.spec).where(
    _SPECS.c.instance_uuid.in_(_KEYS)
)


def volumes_by_instance(
    conn: sa.Connection, uuids: Iterable[str]
) -> dict[str, list[tuple[str, bool]]]:
    """(volume_id, delete_on_termination) of each instance's live volume mappings, by id."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    found: dict[str, list[tuple[str, bool]]] = {}
    for uuid, volume_id, delete in conn.execute(_VOLUMES_SQL, {"keys": wanted}):
        found.setdefault(uuid, []).append((volume_id, bool(delete)))
    return found


def groups_by_instance(conn: sa.Connection, uuids: Iterable[str]) -> dict[str, str]:
    """The server group uuid of each instance that is a member of one."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    return {uuid: group for uuid, group in conn.execute(_GROUPS_SQL, {"keys": wanted})}


def compute_services_by_host(conn: sa.Connection, hosts: Iterable[str]) -> dict[str, sa.RowMapping]:
    """The live ``nova-compute`` service row of each host (forced_down, disabled, heartbeat)."""
    wanted = sorted(set(hosts))
    if not wanted:
        return {}
    found = conn.execute(_SERVICES_SQL, {"keys": wanted}).mappings()
    return {row["host"]: row for row in found}


def spec_placement_by_instance(
    conn: sa.Connection, uuids: Iterable[str]
) -> dict[str, tuple[str | None, dict[str, list[str]] | None]]:
    """(pinned availability zone, scheduler hints) from each instance's request spec."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    found: dict[str, tuple[str | None, dict[str, list[str]] | None]] = {}
    for uuid, text in conn.execute(_SPECS_SQL, {"keys": wanted}):
        data = json.loads(text or "{}")
        found[uuid] = (data.get("availability_zone"), data.get("scheduler_hints"))
    return found


def compute_node_exists(conn: sa.Connection, host: str | None, node: str) -> bool:
    """True when a live compute node named ``node`` (on ``host`` when given) exists."""
    nodes = cell_tables.compute_nodes
    query = sa.select(nodes.c.id).where(nodes.c.hypervisor_hostname == node, nodes.c.deleted == 0)
    if host is not None:
        query = query.where(nodes.c.host == host)
    return conn.execute(query.limit(1)).first() is not None


def compute_node_uuid(conn: sa.Connection, host: str, node: str) -> str | None:
    """The uuid (Placement provider) of the live compute node ``node`` of ``host``."""
    nodes = cell_tables.compute_nodes
    query = sa.select(nodes.c.uuid).where(
        nodes.c.host == host, nodes.c.hypervisor_hostname == node, nodes.c.deleted == 0
    )
    found = conn.execute(query.limit(1)).scalar()
    return str(found) if found is not None else None


def add_group_members(conn: sa.Connection, group_uuid: str, uuids: Iterable[str]) -> None:
    """Make the new servers members of the server group (inside the create's claim)."""
    groups, members = api_tables.instance_groups, api_tables.instance_group_member
    group_id = conn.execute(sa.select(groups.c.id).where(groups.c.uuid == group_uuid)).scalar()
    if group_id is None:
        return
    conn.execute(
        sa.insert(members),
        [{"group_id": group_id, "instance_uuid": uuid, "created_at": utcnow()} for uuid in uuids],
    )


def remove_group_members(conn: sa.Connection, uuids: Sequence[str]) -> None:
    """Take servers out of every server group (a build withdrawn or deleted before it ran)."""
    if uuids:
        members = api_tables.instance_group_member
        conn.execute(sa.delete(members).where(members.c.instance_uuid.in_(list(uuids))))
