"""Read-only batch queries the servers API views need beside the instance rows: attached
volumes (cell DB ``block_device_mapping``), server group membership (API DB) and compute
services by host (cell DB). One statement per call whatever the number of servers.

Called by ``openkeel.api.usecases.servers.gathering``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import sqlalchemy as sa

from openkeel.db.schema import api as api_tables
from openkeel.db.schema import cell as cell_tables
from openkeel.db.schema.columns import utcnow


def volumes_by_instance(
    conn: sa.Connection, uuids: Iterable[str]
) -> dict[str, list[tuple[str, bool]]]:
    """(volume_id, delete_on_termination) of each instance's live volume mappings, by id."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    bdm = cell_tables.block_device_mapping
    query = (
        sa.select(bdm.c.instance_uuid, bdm.c.volume_id, bdm.c.delete_on_termination)
        .where(bdm.c.instance_uuid.in_(wanted), bdm.c.deleted == 0, bdm.c.volume_id.is_not(None))
        .order_by(bdm.c.id)
    )
    found: dict[str, list[tuple[str, bool]]] = {}
    for uuid, volume_id, delete in conn.execute(query):
        found.setdefault(uuid, []).append((volume_id, bool(delete)))
    return found


def groups_by_instance(conn: sa.Connection, uuids: Iterable[str]) -> dict[str, str]:
    """The server group uuid of each instance that is a member of one."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    groups, members = api_tables.instance_groups, api_tables.instance_group_member
    query = (
        sa.select(members.c.instance_uuid, groups.c.uuid)
        .select_from(members.join(groups, groups.c.id == members.c.group_id))
        .where(members.c.instance_uuid.in_(wanted))
    )
    return {uuid: group for uuid, group in conn.execute(query)}


def compute_services_by_host(conn: sa.Connection, hosts: Iterable[str]) -> dict[str, sa.RowMapping]:
    """The live ``nova-compute`` service row of each host (forced_down, disabled, heartbeat)."""
    wanted = sorted(set(hosts))
    if not wanted:
        return {}
    svc = cell_tables.services
    query = sa.select(
        svc.c.host,
        svc.c.forced_down,
        svc.c.disabled,
        svc.c.last_seen_up,
        svc.c.created_at,
        svc.c.updated_at,
    ).where(svc.c.host.in_(wanted), svc.c.binary == "nova-compute", svc.c.deleted == 0)
    return {row["host"]: row for row in conn.execute(query).mappings()}


def spec_placement_by_instance(
    conn: sa.Connection, uuids: Iterable[str]
) -> dict[str, tuple[str | None, dict[str, list[str]] | None]]:
    """(pinned availability zone, scheduler hints) from each instance's request spec."""
    wanted = list(dict.fromkeys(uuids))
    if not wanted:
        return {}
    specs = api_tables.request_specs
    query = sa.select(specs.c.instance_uuid, specs.c.spec).where(specs.c.instance_uuid.in_(wanted))
    found: dict[str, tuple[str | None, dict[str, list[str]] | None]] = {}
    for uuid, text in conn.execute(query):
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
