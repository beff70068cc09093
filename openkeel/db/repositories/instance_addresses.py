"""Which live instance of a cell holds a fixed IP address (from the info caches): the
metadata service's lookup of a requester by its address."""

from __future__ import annotations

import json

import sqlalchemy as sa

from openkeel.db.repositories.instance_rows import CACHE, INST


def _addresses(network_info: str | None) -> set[str]:
    vifs = json.loads(network_info or "[]")
    return {ip.get("address") for vif in vifs
            for subnet in (vif.get("network") or {}).get("subnets") or ()
            for ip in subnet.get("ips") or ()}  # fmt: skip


def uuids_with_address(conn: sa.Connection, address: str) -> list[str]:
    """The uuids of the cell's live instances with fixed IP ``address``."""
    query = (
        sa.select(CACHE.c.instance_uuid, CACHE.c.network_info)
        .join(INST, INST.c.uuid == CACHE.c.instance_uuid)
        .where(INST.c.deleted == 0, CACHE.c.network_info.contains(f'"{address}"'))
    )
    return [row.instance_uuid for row in conn.execute(query) if address in _addresses(row.network_info)]  # fmt: skip
