"""Host aggregate use cases with Nova's rules: unique names, hosts that must be compute
services, and availability zones kept as ``availability_zone`` metadata that may not put a
host in two zones nor move the zone of hosts that run instances. Called by the
os-aggregates handlers.

Nova also mirrors aggregate membership into Placement and notifies the scheduler; this
deployment has no Placement integration yet, so only the API database changes.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.db.repositories import aggregates as repo
from openkeel.domain.aggregates import AZ_KEY, Aggregate
from openkeel.domain.errors import Conflict, Invalid, NotFound

POLICY_ROOT = "os_compute_api:os-aggregates:%s"
IMAGES_POLICY = "compute:aggregates:images"

# Nova's InvalidAggregateAction* message prefixes, per action.
ADD = "Cannot add host to aggregate"
REMOVE = "Cannot remove host from aggregate"
UPDATE = "Cannot update aggregate"
UPDATE_META = "Cannot update metadata of aggregate"


Refusal = type[Invalid] | type[Conflict]


def _refused(kind: Refusal, action: str, aggregate_id: int, reason: str) -> Invalid | Conflict:
    """Nova's InvalidAggregateAction* text; its status (400 or 409) depends on the API."""
    return kind(f"{action} {aggregate_id}. Reason: {reason}.")


def parse_id(raw: str) -> int:
    """The aggregate id of a URL; Invalid (400) as Nova's ``validate_integer``."""
    try:
        return int(raw)
    except ValueError:
        raise Invalid("Invalid input received: id must be an integer") from None


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class AggregateService:
    """Aggregates of the deployment, for one (admin) caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._repo = repo.AggregateRepository(services.api_db)
        self._cell_dbs: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self._context = context
        self._notifier = services.notifier
        caches = getattr(services, "caches", None)
        self._host_zones = caches.host_zones if caches is not None else None

    def _zones_changed(self) -> None:
        """Forget the cached host zones once a change is committed (Nova's reset_cache)."""
        if self._host_zones is not None:
            self._host_zones.reset()

    def authorize(self, action: str) -> None:
        """Check ``os_compute_api:os-aggregates:<action>`` (an empty target, as Nova)."""
        self._context.can(POLICY_ROOT % action, target={})

    def list_all(self) -> list[Aggregate]:
        """Every aggregate."""
        self.authorize("index")
        return self._repo.list_all()

    def get(self, raw_id: str) -> Aggregate:
        """One aggregate; Invalid for a non-integer id, NotFound when absent."""
        self.authorize("show")
        return self._load(raw_id)

    def _load(self, raw_id: str) -> Aggregate:
        found = self._repo.get(parse_id(raw_id))
        if found is None:
            raise NotFound(f"Aggregate {raw_id} could not be found.")
        return found

    def create(self, name: str, zone: str | None) -> Aggregate:
        """A new aggregate, in ``zone`` when given; Conflict for a taken name."""
        self.authorize("create")
        metadata = {AZ_KEY: zone} if zone else {}
        legacy = {"name": name, "availability_zone": zone}
        self._notifier.aggregate("create", "start", None, name=name, metadata=metadata, legacy_payload=legacy)  # fmt: skip
        created = self._repo.create(name, str(uuid.uuid4()), metadata)
        self._notifier.aggregate("create", "end", created, legacy_payload={**legacy, "aggregate_id": created.id})  # fmt: skip
        return created

    def update(
        self, raw_id: str, name: str | None, zone_given: bool, zone: str | None
    ) -> Aggregate:
        """Rename and/or move to a zone (the rename stays even when the zone is refused)."""
        self.authorize("update")
        parse_id(raw_id)
        aggregate = self._load(raw_id)
        legacy = {"aggregate_id": aggregate.id, "updated_values": {"name": name, "availability_zone": zone}}  # fmt: skip
        self._notifier.aggregate("update_prop", "start", aggregate, legacy_payload=legacy)
        if name is not None:
            self._repo.rename(aggregate.id, name)
            aggregate = self._load(raw_id)
        if zone_given:
            changes = {AZ_KEY: zone}
            self._check_zone_change((Invalid, UPDATE), aggregate, changes, None, True)
            self._repo.update_metadata(aggregate.id, changes)
            self._zones_changed()
            aggregate = replace(self._load(raw_id), updated_at=_now())
        self._notifier.aggregate("update_prop", "end", aggregate, legacy_payload=legacy)
        return aggregate

    def set_metadata(self, raw_id: str, changes: Mapping[str, str | None]) -> Aggregate:
        """Merge ``changes`` into the metadata (None deletes a key)."""
        self.authorize("set_metadata")
        aggregate = self._load(raw_id)
        self._check_zone_change((Invalid, UPDATE_META), aggregate, changes, None, True)
        legacy = {"aggregate_id": aggregate.id, "meta_data": dict(changes)}
        self._notifier.aggregate("update_metadata", "start", aggregate, legacy_payload=legacy)
        self._repo.update_metadata(aggregate.id, changes)
        self._zones_changed()
        updated = replace(self._load(raw_id), updated_at=_now())
        self._notifier.aggregate("update_metadata", "end", updated, legacy_payload=legacy)
        return updated

    def delete(self, raw_id: str) -> None:
        """Delete an empty aggregate."""
        self.authorize("delete")
        aggregate = self._load(raw_id)
        if aggregate.hosts:
            raise _refused(Invalid, REMOVE, aggregate.id, "Host aggregate is not empty")
        legacy = {"aggregate_id": aggregate.id}
        self._notifier.aggregate("delete", "start", aggregate, legacy_payload=legacy)
        if not self._repo.delete(aggregate.id):
            raise NotFound(f"Aggregate {raw_id} could not be found.")
        self._zones_changed()
        self._notifier.aggregate("delete", "end", aggregate, legacy_payload=legacy)

    def add_host(self, raw_id: str, host: str) -> Aggregate:
        """Add a compute host, keeping it in one zone and its instances in theirs."""
        self.authorize("add_host")
        parse_id(raw_id)
        if not self._is_compute_host(host):
            raise NotFound(f"Compute host {host} could not be found.")
        aggregate = self._load(raw_id)
        self._check_zone_change((Conflict, ADD), aggregate, aggregate.metadata, [host], False)
        self._check_host_zone_move((Conflict, ADD), aggregate, host, adding=True)
        legacy = {"aggregate_id": aggregate.id, "host_name": host}
        self._notifier.aggregate("add_host", "start", aggregate, legacy_payload=legacy)
        if not self._repo.add_host(aggregate.id, host):
            raise Conflict(f"Aggregate {raw_id} already has host {host}.")
        self._zones_changed()
        added = self._load(raw_id)
        self._notifier.aggregate("add_host", "end", added, legacy_payload=legacy)
        return added

    def remove_host(self, raw_id: str, host: str) -> Aggregate:
        """Remove a host; any look-up failure is Nova's single 404 message."""
        self.authorize("remove_host")
        parse_id(raw_id)
        missing = NotFound(f"Cannot remove host {host} in aggregate {raw_id}")
        if not self._is_compute_host(host):
            raise missing
        aggregate = self._repo.get(parse_id(raw_id))
        if aggregate is None:
            raise missing
        self._check_host_zone_move((Conflict, REMOVE), aggregate, host, adding=False)
        legacy = {"aggregate_id": aggregate.id, "host_name": host}
        self._notifier.aggregate("remove_host", "start", aggregate, legacy_payload=legacy)
        if not self._repo.remove_host(aggregate.id, host):
            raise missing
        self._zones_changed()
        removed = self._load(raw_id)
        self._notifier.aggregate("remove_host", "end", removed, legacy_payload=legacy)
        return removed

    def cache_images(self, raw_id: str, image_ids: Sequence[str]) -> None:
        """Accept an image pre-caching request (2.81) for an existing aggregate."""
        self._context.can(IMAGES_POLICY, target={})
        parse_id(raw_id)
        if len(set(image_ids)) != len(image_ids):
            raise Invalid("Duplicate images in request")
        self._load(raw_id)
        # Nova's conductor would now ask each member compute to cache the images; no compute
        # role consumes such requests yet, so the accepted request has no further effect.

    # --- rules ---------------------------------------------------------------------------------

    def _is_compute_host(self, host: str) -> bool:
        cell = self._repo.host_cell(host)
        if cell is not None and cell in self._cell_dbs:
            engines = [self._cell_dbs[cell]]
        else:
            engines = list(self._cell_dbs.values())
        return any(repo.compute_service_host(e, host) == host for e in engines)

    def _check_zone_change(
        self,
        how: tuple[Refusal, str],
        aggregate: Aggregate,
        metadata: Mapping[str, str | None],
        hosts: Sequence[str] | None,
        check_instances: bool,
    ) -> None:
        if AZ_KEY not in metadata:
            return
        zone = metadata[AZ_KEY]
        if not zone:
            reason = f"Aggregate {aggregate.name} does not support empty named availability zone"
            raise _refused(*how, aggregate.id, reason)
        targets = list(hosts or aggregate.hosts)
        conflicting = [
            z for agg_id, z in self._repo.zones_of_hosts(targets)
            if z != zone and agg_id != aggregate.id
        ]  # fmt: skip
        if conflicting:
            reason = f"One or more hosts already in availability zone(s) {conflicting!r}"
            raise _refused(*how, aggregate.id, reason)
        if check_instances and aggregate.availability_zone != zone and self._instances(targets):
            reason = "One or more hosts contain instances in this zone"
            raise _refused(*how, aggregate.id, reason)

    def _instances(self, hosts: Sequence[str]) -> int:
        return sum(repo.count_instances_on_hosts(e, hosts) for e in self._cell_dbs.values())

    def _check_host_zone_move(
        self, how: tuple[Refusal, str], aggregate: Aggregate, host: str, adding: bool
    ) -> None:
        count = self._instances([host])
        own = aggregate.availability_zone
        if not count or not own:
            return
        zones = {
            z for agg_id, z in self._repo.zones_of_hosts([host])
            if adding or agg_id != aggregate.id
        }  # fmt: skip
        other = sorted(zones)[0] if zones else None
        before, after = (other, own) if adding else (own, other)
        if before == after:
            return
        verb = "added to" if adding else "removed from"
        reason = (
            f"The host cannot be {verb} the aggregate as the availability zone of the host "
            f"would change from '{before}' to '{after}' but the host already has {count} "
            "instance(s). Changing the AZ of an existing instance is not supported by this "
            "action. Move the instances away from this host then try again. If you need to "
            "move the instances between AZs then you can use shelve_offload and unshelve to "
            "achieve this."
        )
        raise _refused(*how, aggregate.id, reason)
