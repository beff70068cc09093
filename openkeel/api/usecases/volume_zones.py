"""``[cinder] cross_az_attach`` (Nova's ``_validate_vol_az_for_create`` and
``nova.volume.cinder.API.check_availability_zone``): with it False, a server and its volumes
must be in one availability zone. True (the default) checks nothing."""

from __future__ import annotations

from collections.abc import Iterable

from openkeel.api.services import ApiServices
from openkeel.db.engine import reader
from openkeel.db.repositories.availability_zones import zones_by_host
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import Instance
from openkeel.volume.adapter import VolumeInfo


def zone_for_create(
    services: ApiServices, instance_zone: str | None, volumes: Iterable[VolumeInfo]
) -> str | None:
    """The volumes' zone when the server must take it (no zone asked for, the volumes not in
    ``[DEFAULT] default_availability_zone``); None otherwise. A 400 when the volumes are in
    different zones or not in the one asked for."""
    if services.conf.cinder.cross_az_attach:
        return None
    zones = [v.availability_zone for v in volumes]
    if not zones:
        return None
    if len(set(zones)) > 1:
        _mismatch(f"Volumes are in different availability zones: {','.join(zones)}")
    volume_zone = zones[0]
    if instance_zone is None:
        return volume_zone if volume_zone != services.conf.default_availability_zone else None
    if instance_zone != volume_zone:
        _mismatch(
            "Server and volumes are not in the same availability zone. Server is in: "
            f"{instance_zone}. Volumes are in: {volume_zone}"
        )
    return None


def _mismatch(reason: str) -> None:
    raise Invalid(
        f"The availability zone between the server and its attached volumes do not match: {reason}."
    )


def check_attach(services: ApiServices, instance: Instance, volume: VolumeInfo) -> None:
    """Attaching ``volume``: a 400 when it is in another zone than the server."""
    if services.conf.cinder.cross_az_attach:
        return
    zone = _instance_zone(services, instance)
    if zone != volume.availability_zone:
        raise Invalid(
            f"Invalid volume: Instance {instance.uuid} and volume {volume.id} are not in the "
            f"same availability_zone. Instance is in {zone}. Volume is in "
            f"{volume.availability_zone}"
        )


def _instance_zone(services: ApiServices, instance: Instance) -> str | None:
    """Nova's get_instance_availability_zone: the host's zone, or the one asked for."""
    if not instance.host:
        return instance.availability_zone
    with reader(services.api_db).connect() as conn:
        found = sorted(zones_by_host(conn, [instance.host]).get(instance.host, ()))
    return found[0] if found else services.conf.default_availability_zone
