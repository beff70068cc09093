"""A compute host that comes back after its servers were evacuated (Nova's
``_destroy_evacuated_instances``): their guests here are removed and their evacuations marked
``completed``. Run by ComputeService.start before the instances are reconciled.

Evacuations of this host in ``accepted``, ``pre-migrating`` or ``done`` count; a guest is only
destroyed when its server now lives elsewhere (or was deleted), never one that still belongs
here (an evacuation that failed before the move).
"""

from __future__ import annotations

import logging

from openkeel.clients.placement_errors import PlacementError
from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.db.engine import reader
from openkeel.db.repositories import migrations
from openkeel.domain import migrations as mstatus
from openkeel.domain.instances import InstanceNotFound

LOG = logging.getLogger(__name__)
EVACUATION = "evacuation"
PENDING = (mstatus.ACCEPTED, mstatus.PRE_MIGRATING, mstatus.DONE)


def destroy_evacuated_instances(host: ComputeHost) -> list[str]:
    """Remove the guests of servers evacuated from this host; returns their uuids."""
    with reader(host.records.db).connect() as conn:
        found = migrations.list_migrations(
            conn, statuses=PENDING, migration_types=(EVACUATION,), host=host.host
        )
    destroyed = []
    for migration in found:
        if migration.source_compute != host.host:
            continue
        try:
            instance = host.records.get(migration.instance_uuid, read_deleted="yes")
        except InstanceNotFound:
            continue
        if instance.host == host.host and not instance.deleted:
            continue  # still ours: the evacuation never moved it
        if migration.status == mstatus.DONE or instance.deleted:
            LOG.warning("Removing the guest of %s, evacuated from %s", instance.uuid, host.host)
            try:
                host.driver.destroy(guest.instance_ref(host.conf, instance))
            except Exception:
                LOG.exception("Could not remove the evacuated guest of %s", instance.uuid)
                continue
            try:  # the source's resources, held by the migration since the evacuation
                host.placement.delete_allocations(migration.uuid)
            except PlacementError:
                LOG.exception("Could not free the source allocation of %s", instance.uuid)
            with host.records.db.begin() as conn:
                migrations.update(conn, migration.id, status=mstatus.COMPLETED)
            destroyed.append(instance.uuid)
    return destroyed
