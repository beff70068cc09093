"""Instance faults (cell DB ``instance_faults``): errors recorded against an instance.

Conductor (NoValidHost → ERROR in cell0) and compute (build/operation failures) record them;
the servers API shows the latest one as ``fault`` of an ERROR server (loaded in batch with the
instance by ``instance_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from openkeel.db.repositories import instance_rows as rows
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import InstanceFault

_F = rows.FAULTS
MESSAGE_MAX = 255


def create(
    conn: sa.Connection,
    instance_uuid: str,
    *,
    code: int,
    message: str,
    details: str | None = None,
    host: str | None = None,
) -> InstanceFault:
    """Record a fault (``message`` cut to the column's 255 characters, as Nova does)."""
    fault = InstanceFault(
        code=code,
        message=message[:MESSAGE_MAX],
        details=details,
        created_at=utcnow(),
        host=host,
    )
    conn.execute(
        sa.insert(_F).values(
            instance_uuid=instance_uuid,
            code=fault.code,
            message=fault.message,
            details=fault.details,
            host=fault.host,
            created_at=fault.created_at,
            deleted=0,
        )
    )
    return fault


def latest(conn: sa.Connection, instance_uuids: Iterable[str]) -> dict[str, InstanceFault]:
    """The newest fault of each instance (one statement)."""
    return rows.latest_faults(conn, instance_uuids)


def list_for_instance(conn: sa.Connection, instance_uuid: str) -> list[InstanceFault]:
    """All live faults of the instance, newest first."""
    query = (
        sa.select(_F)
        .where(_F.c.instance_uuid == instance_uuid, _F.c.deleted == 0)
        .order_by(_F.c.created_at.desc(), _F.c.id.desc())
    )
    return [rows.fault_from_row(row) for row in conn.execute(query)]
