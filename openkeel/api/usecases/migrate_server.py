"""Resize, cold migration, confirmResize and revertResize of a server (API tier).

Nova's compute API checks (lock, vm/task state gates, flavor, disk, image limits, quota for the
upsize delta of cores and ram), then task state ``resize_prep`` (or ``resize_reverting``), the
instance action with the user's request id, and a cast: conductor ``migrate_server`` for
resize/migrate, compute ``confirm_resize`` (source) or ``revert_resize`` (destination) for the
end of a resize. Called by the servers action handlers and openkeel.api.resources.migrate_server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.create_building import snapshot
from openkeel.api.usecases.servers.create_checks import flavor as find_flavor
from openkeel.api.usecases.servers.create_quota import TooManyInstances
from openkeel.api.usecases.servers.lifecycle import InstanceIsLocked
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import (
    instance_actions,
    instances,
    migrations,
    request_specs,
    server_extras,
)
from openkeel.domain import migrations as mstatus
from openkeel.domain.errors import Invalid
from openkeel.domain.flavors import Viewer
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceUpdate, RequestSpecNotFound
from openkeel.domain.migrations import Migration, MigrationNotFoundByStatus
from openkeel.domain.quotas import QuotaExceeded
from openkeel.domain.resource_requests import ports_requests
from openkeel.domain.states import TaskState, ensure_action_allowed
from openkeel.network.factory import get_network_adapter
from openkeel.rpc.messages.compute import ConfirmResize, RevertResize
from openkeel.rpc.messages.conductor import MigrateServer

GB = 1024**3


class ServerMover:
    """Resize / migrate / confirm / revert for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    # --- resize and migrate ------------------------------------------------------------------

    def resize(self, found: FoundServer, flavor_ref: str, auto_disk_config: bool | None) -> None:
        """The resize action (400 unknown/same flavor, disk too small; 403 over quota)."""
        inst = self._checked(found, "resize", None)
        viewer = Viewer(self._context.project_id, self._context.is_admin)
        new = snapshot(find_flavor(self._services, viewer, flavor_ref))
        spec = self._spec(inst)
        bfv = bool(spec.get("is_bfv")) or not inst.image_ref
        if new.root_gb == 0 and inst.flavor.root_gb != 0 and not bfv:
            raise Invalid(
                "Server disk was unable to be resized because: "
                "Resize to zero disk flavor is not allowed."
            )
        if (new.id, new.flavorid) == (inst.flavor.id, inst.flavor.flavorid):
            raise Invalid("When resizing, instances must change flavor!")
        self._check_upsize_quota(inst, inst.flavor, new)
        _check_image_fits(spec.get("image") or {}, new, bfv)
        same_host = bool(self._services.conf.allow_resize_to_same_host)
        self._start(found, "resize", new, spec, [] if same_host else [inst.host], None,
                    auto_disk_config)  # fmt: skip

    def migrate(self, found: FoundServer, host: str | None) -> None:
        """The migrate action (cold migration, optionally to ``host``)."""
        inst = self._checked(found, "resize", "migrate")
        if host is not None:
            self._check_target_host(found, host)
        spec = self._spec(inst)
        destination = {"host": host} if host else None
        self._start(found, "migrate", None, spec, [inst.host], destination, None)

    def _checked(self, found: FoundServer, gate: str, api_action: str | None) -> Instance:
        inst = found.instance
        if inst.locked and not self._context.is_admin:
            raise InstanceIsLocked(inst.uuid)
        ensure_action_allowed(
            gate,
            server_id=inst.uuid,
            vm_state=inst.vm_state,
            task_state=inst.task_state,
            launched=inst.launched_at is not None,
            api_action=api_action,
        )
        return inst

    def _spec(self, inst: Instance) -> dict[str, Any]:
        return stored_request_spec(self._services, inst)

    def _check_target_host(self, found: FoundServer, host: str) -> None:
        if host == found.instance.host:
            raise Invalid("Cannot migrate to the host where the server exists.")
        with self._cell(found).connect() as conn:
            if host not in server_extras.compute_services_by_host(conn, [host]):
                raise Invalid(f"Compute host {host} could not be found.")

    def _start(
        self,
        found: FoundServer,
        action: str,
        new: FlavorSnapshot | None,
        spec: dict[str, Any],
        ignore_hosts: list[str | None],
        destination: dict[str, Any] | None,
        auto_disk_config: bool | None,
    ) -> None:
        ignore = [h for h in ignore_hosts if h]
        spec.update(ignore_hosts=ignore, requested_destination=destination)
        changes = InstanceUpdate(
            task_state=TaskState.RESIZE_PREP.value,
            progress=0,
            auto_disk_config=bool(auto_disk_config),
        )
        updated = self._save(found, changes, action)
        conductor = getattr(self._services, "conductor", None)
        if conductor is None:
            return
        task = TaskState.RESIZE_PREP.value
        with undone_if_unsent(self._cell(found), updated.uuid, action, task):
            message = MigrateServer(
                updated.uuid, flavor=None if new is None else new.to_primitive(),
                scheduler_hint={"filter_properties": {"ignore_hosts": ignore}},
                request_spec=spec,
            )  # fmt: skip
            conductor.cast(call_context(self._context), message)

    # --- confirm and revert ------------------------------------------------------------------

    def confirm(self, found: FoundServer) -> None:
        """confirmResize: the source drops the old guest (204)."""
        inst = self._checked(found, "confirm_resize", None)
        migration = self._finished(found)
        migration = self._set_status(found, migration, mstatus.CONFIRMING)
        self._record(found, "confirmResize")
        compute = getattr(self._services, "compute", None)
        if compute is not None:
            unmark = self._back_to_finished(found, migration)
            with undone_if_unsent(self._cell(found), inst.uuid, "confirmResize", undo=unmark):
                confirm = ConfirmResize(inst.uuid, migration.to_primitive())
                compute.cast(call_context(self._context), migration.source_compute or "", confirm)

    def revert(self, found: FoundServer) -> None:
        """revertResize: back to the source with the old flavor (202)."""
        inst = self._checked(found, "revert_resize", None)
        migration = self._finished(found)
        if inst.old_flavor is not None:
            self._check_upsize_quota(inst, inst.flavor, inst.old_flavor)
        changes = InstanceUpdate(task_state=TaskState.RESIZE_REVERTING.value)
        updated = self._save(found, changes, "revertResize")
        migration = self._set_status(found, migration, mstatus.REVERTING)
        compute = getattr(self._services, "compute", None)
        if compute is not None:
            unmark = self._back_to_finished(found, migration)
            task = TaskState.RESIZE_REVERTING.value
            with undone_if_unsent(self._cell(found), inst.uuid, "revertResize", task, unmark):
                revert = RevertResize(updated.uuid, migration.to_primitive(), self._spec(inst))
                compute.cast(call_context(self._context), migration.dest_compute or "", revert)

    def _finished(self, found: FoundServer) -> Migration:
        with self._cell(found).connect() as conn:
            try:
                return migrations.get_by_instance_and_status(
                    conn, found.instance.uuid, mstatus.FINISHED
                )
            except MigrationNotFoundByStatus:
                raise Invalid("Instance has not been resized.") from None

    def _back_to_finished(self, found: FoundServer, migration: Migration) -> Callable[[], None]:
        """The undo of a confirm or revert whose cast was not sent: migration ``finished``."""

        def undo() -> None:
            self._set_status(found, migration, mstatus.FINISHED)

        return undo

    def _set_status(self, found: FoundServer, migration: Migration, status: str) -> Migration:
        with self._cell(found).begin() as conn:
            return migrations.update(conn, migration.id, status=status)

    # --- shared ------------------------------------------------------------------------------

    def _cell(self, found: FoundServer) -> Any:
        if found.cell_uuid is None:
            raise Invalid("Instance has not been resized.")
        return self._services.cell_dbs[found.cell_uuid]

    def _save(self, found: FoundServer, changes: InstanceUpdate, action: str) -> Instance:
        """Compare-and-swap on no task state, and the instance action, in one transaction."""
        ctx = self._context
        with self._cell(found).begin() as conn:
            updated = instances.update(
                conn, found.instance.uuid, changes, expected_task_state=[None]
            )
            instance_actions.start_action(
                conn, updated.uuid, action, request_id=ctx.request_id,
                user_id=ctx.user_id, project_id=ctx.project_id,
            )  # fmt: skip
        notify_saved(self._services, ctx, found.instance, updated)
        return updated

    def _record(self, found: FoundServer, action: str) -> None:
        ctx = self._context
        with self._cell(found).begin() as conn:
            instance_actions.start_action(
                conn, found.instance.uuid, action, request_id=ctx.request_id,
                user_id=ctx.user_id, project_id=ctx.project_id,
            )  # fmt: skip

    def _check_upsize_quota(
        self, inst: Instance, current: FlavorSnapshot, new: FlavorSnapshot
    ) -> None:
        deltas = {
            "cores": max(0, new.vcpus - current.vcpus),
            "ram": max(0, new.memory_mb - current.memory_mb),
        }
        deltas = {k: v for k, v in deltas.items() if v}
        if not deltas:
            return
        try:
            QuotaEngine(self._services).check(inst.project_id, inst.user_id, deltas)
        except QuotaExceeded as err:
            overs: list[str] = [r for r in ("cores", "ram") if r in err.overs]
            raise TooManyInstances(
                overs,
                [str(deltas[r]) for r in overs],
                [str(err.usages.get(r, 0)) for r in overs],
                [str(err.quotas[r]) for r in overs],
            ) from err


def _check_image_fits(image: dict[str, Any], flavor: FlavorSnapshot, bfv: bool) -> None:
    """Nova's flavor-vs-image checks of a resize (400 with Nova's messages)."""
    if int(image.get("min_ram") or 0) > flavor.memory_mb:
        raise Invalid("Flavor's memory is too small for requested image.")
    if bfv or not flavor.root_gb:
        return
    disk = flavor.root_gb * GB
    size = int(image.get("size") or 0)
    if size > disk:
        raise Invalid(
            "Flavor's disk is too small for requested image. Flavor disk is "
            f"{disk} bytes, image is {size} bytes."
        )
    min_disk = int(image.get("min_disk") or 0) * GB
    if min_disk > disk:
        raise Invalid(
            "Flavor's disk is smaller than the minimum size specified in image metadata. "
            f"Flavor disk is {disk} bytes, minimum size is {min_disk} bytes."
        )


def stored_request_spec(services: ApiServices, inst: Instance) -> dict[str, Any]:
    """The instance's request spec as saved at boot (a minimal one when none was saved),
    with the resource requests of the ports it has now (an interface attached since, a QoS
    policy changed: Nova's ``get_requested_resource_for_instance`` before a move)."""
    with services.api_db.connect() as conn:
        try:
            spec = request_specs.get(conn, inst.uuid).to_primitive()
        except RequestSpecNotFound:
            spec = {"instance_uuid": inst.uuid, "flavor": inst.flavor.to_primitive()}
    adapter = get_network_adapter(services.conf, services.api_db)
    return {**spec, **ports_requests(adapter.instance_ports(inst.uuid)).spec_fields()}
