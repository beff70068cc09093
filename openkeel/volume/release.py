"""A deleted server's volumes (Nova's _cleanup_volumes / _local_cleanup_bdm_volumes): every
Cinder attachment deleted, the ``delete_on_termination`` volumes deleted (a failure logged and
the volume left, as Nova does), the mappings removed. Called by the compute host's terminate
and by the compute API's local delete (host down, shelved offloaded)."""

from __future__ import annotations

import logging

import sqlalchemy as sa

from openkeel.db.repositories import block_devices
from openkeel.volume.adapter import VolumeAdapter, VolumeContext

LOG = logging.getLogger(__name__)


def release_volumes(
    cell_db: sa.Engine, volumes: VolumeAdapter | None, context: VolumeContext, uuid: str
) -> None:
    with cell_db.connect() as conn:
        mappings = block_devices.volumes_of(conn, uuid)
    if not mappings or volumes is None:
        return
    for mapping in mappings:
        if mapping.attachment_id:
            volumes.attachment_delete(context, mapping.attachment_id)
        if mapping.delete_on_termination:
            try:
                volumes.delete(context, mapping.volume_id)
            except Exception:
                LOG.exception("Deleting volume %s of %s failed", mapping.volume_id, uuid)
        with cell_db.begin() as conn:
            block_devices.remove(conn, mapping.uuid)
