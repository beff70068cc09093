"""Server metadata and tags of one instance (cell DB ``instance_metadata`` and ``tags``).

Used by the server metadata (``/servers/{id}/metadata``) and server tags (``/servers/{id}/tags``)
APIs. Every change bumps the instance's ``updated_at`` (so ``changes-since`` sees it). The
caller checks Nova's limits (metadata quota, 50 tags) and the instance's state first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sqlalchemy as sa

from openkeel.db.repositories import instance_rows as rows
from openkeel.db.repositories.instances import exists, replace_key_values
from openkeel.db.schema.columns import utcnow
from openkeel.domain.instances import InstanceNotFound, InstanceTagNotFound

INST = rows.INST


def _require(conn: sa.Connection, uuid: str) -> None:
    if not exists(conn, uuid):
        raise InstanceNotFound(uuid)


def get_metadata(conn: sa.Connection, uuid: str) -> dict[str, str]:
    _require(conn, uuid)
    meta = rows.META
    query = sa.select(meta.c.key, meta.c.value).where(
        meta.c.instance_uuid == uuid, meta.c.deleted == 0
    )
    return {row.key: row.value for row in conn.execute(query.order_by(meta.c.id))}


def update_metadata(
    conn: sa.Connection, uuid: str, metadata: Mapping[str, str], *, replace: bool
) -> dict[str, str]:
    """Merge ``metadata`` into the server's (or replace it all); return the result."""
    current = get_metadata(conn, uuid)
    wanted = dict(metadata) if replace else {**current, **metadata}
    replace_key_values(conn, rows.META, uuid, wanted, utcnow())
    _touch(conn, uuid)
    return wanted


def delete_metadata_key(conn: sa.Connection, uuid: str, key: str) -> bool:
    """Remove one key; False if the server had no such key."""
    current = get_metadata(conn, uuid)
    if key not in current:
        return False
    del current[key]
    replace_key_values(conn, rows.META, uuid, current, utcnow())
    _touch(conn, uuid)
    return True


def _touch(conn: sa.Connection, uuid: str) -> None:
    conn.execute(sa.update(INST).where(INST.c.uuid == uuid).values(updated_at=utcnow()))


def get_tags(conn: sa.Connection, uuid: str) -> list[str]:
    _require(conn, uuid)
    tags = rows.TAGS
    query = sa.select(tags.c.tag).where(tags.c.resource_id == uuid).order_by(tags.c.tag)
    return list(conn.execute(query).scalars())


def set_tags(conn: sa.Connection, uuid: str, tags: Iterable[str]) -> list[str]:
    """Replace all tags of the server; return them sorted."""
    _require(conn, uuid)
    table = rows.TAGS
    wanted = sorted(set(tags))
    conn.execute(sa.delete(table).where(table.c.resource_id == uuid))
    if wanted:
        conn.execute(sa.insert(table), [{"resource_id": uuid, "tag": t} for t in wanted])
    _touch(conn, uuid)
    return wanted


def add_tag(conn: sa.Connection, uuid: str, tag: str) -> bool:
    """Add one tag; False if the server had it already."""
    if tag in get_tags(conn, uuid):
        return False
    conn.execute(sa.insert(rows.TAGS).values(resource_id=uuid, tag=tag))
    _touch(conn, uuid)
    return True


def delete_tag(conn: sa.Connection, uuid: str, tag: str) -> None:
    """Remove one tag; ``InstanceTagNotFound`` (404) if the server lacks it."""
    _require(conn, uuid)
    table = rows.TAGS
    result = conn.execute(sa.delete(table).where(table.c.resource_id == uuid, table.c.tag == tag))
    if result.rowcount == 0:
        raise InstanceTagNotFound(uuid, tag)
    _touch(conn, uuid)
