"""shelve, shelveOffload and unshelve (Nova's compute API ``shelve``, ``shelve_offload`` and
``unshelve``).

shelve: lock, state (ACTIVE, SHUTOFF, PAUSED, SUSPENDED, no task), task ``shelving``
(``image_base_image_ref`` kept in the system metadata) and the ``shelve`` action; an
image-backed server gets a queued ``<name>-shelved`` snapshot image and compute's
``shelve_instance``, a volume-backed one ``shelve_offload_instance`` directly.
shelveOffload: lock, SHELVED, task ``shelving_offloading``, compute's ``shelve_offload_instance``.
unshelve: lock, SHELVED or SHELVED_OFFLOADED; an availability zone (2.77; null unpins, 2.91) or a
host (2.91, admin: ``unshelve_to_host``) only for an offloaded server (409), the zone must be
available (400), the host known (400) and in the zone the server will have (409); the request
spec keeps the zone and the requested host; task ``unshelving``, the ``unshelve`` action, the
conductor's ``unshelve_instance``.
Called by openkeel.api.resources.servers.handlers_shelve.
"""

from __future__ import annotations

import contextlib
from typing import Any

from openkeel.api.usecases.images import ImageProxy
from openkeel.api.usecases.migrate_server import stored_request_spec
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers import create_checks as checks
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.api.usecases.servers.snapshot import ServerSnapshotter
from openkeel.db.engine import reader
from openkeel.db.repositories import request_specs, server_extras
from openkeel.db.repositories.availability_zones import zones_by_host
from openkeel.domain.errors import Conflict, Invalid
from openkeel.domain.instances import UNSET, InstanceUpdate, RequestSpecNotFound
from openkeel.domain.states import TaskState, VmState
from openkeel.rpc.clients.compute import instance_host
from openkeel.rpc.messages.compute import ShelveInstance, ShelveOffloadInstance
from openkeel.rpc.messages.conductor import UnshelveInstance

POLICY = "os_compute_api:os-shelve:%s"


class UnshelveInstanceInvalidState(Conflict):
    """Nova's UnshelveInstanceInvalidState (409)."""

    def __init__(self, uuid: str, state: str | None) -> None:
        super().__init__(
            f'Specifying an availability zone or a host when unshelving server "{uuid}" with '
            f'status "{state}" is not supported. The server status must be SHELVED_OFFLOADED.'
        )


class ServerShelver(ServerSnapshotter):
    """The shelve family for one caller."""

    def authorize_shelve(self, action: str, found: FoundServer, with_user: bool = True) -> None:
        target = {"project_id": found.instance.project_id}
        if with_user:
            target["user_id"] = found.instance.user_id
        self._context.can(POLICY % action, target)

    def shelve(self, found: FoundServer) -> None:
        inst = found.instance
        self._check_lock(inst)
        self._gate("shelve", inst)
        task = TaskState.SHELVING.value
        sysmeta = {**inst.system_metadata, "image_base_image_ref": inst.image_ref or ""}
        changes = InstanceUpdate(task_state=task, system_metadata=sysmeta)
        image_id = None
        if inst.image_ref:
            image = self._register(inst, f"{inst.display_name}-shelved", "snapshot", {})
            image_id = image.id
        try:
            updated = self._update(found, changes, [None], action="shelve")
        except Exception:
            if image_id is not None:
                self._forget_id(image_id)
            raise
        message: ShelveInstance | ShelveOffloadInstance = (
            ShelveInstance(inst.uuid, image_id) if image_id else ShelveOffloadInstance(inst.uuid)
        )
        self._send(found, updated, message, task, image_id)

    def shelve_offload(self, found: FoundServer) -> None:
        inst = found.instance
        self._check_lock(inst)
        self._gate("shelve_offload", inst)
        task = TaskState.SHELVING_OFFLOADING.value
        changes = InstanceUpdate(task_state=task)
        updated = self._update(found, changes, [None], action="shelveOffload")
        self._send(found, updated, ShelveOffloadInstance(inst.uuid), task, None)

    def unshelve(self, found: FoundServer, new_az: Any = UNSET, host: str | None = None) -> None:
        """``new_az`` UNSET: the zone stays; None: unpinned (2.91); a name: that zone."""
        inst = found.instance
        self._check_lock(inst)
        self._gate("unshelve", inst)
        az_passed = new_az is not UNSET
        if (az_passed or host) and inst.vm_state != VmState.SHELVED_OFFLOADED:
            raise UnshelveInstanceInvalidState(inst.uuid, inst.vm_state)
        if az_passed and new_az:
            checks.zone_available(self._services, new_az)
        spec = stored_request_spec(self._services, inst)
        expected_az = new_az if az_passed else spec.get("availability_zone")
        if host:
            self._context.can(POLICY % "unshelve_to_host",
                              {"user_id": inst.user_id, "project_id": inst.project_id})  # fmt: skip
            self._check_host(host, expected_az)
        spec["availability_zone"] = expected_az
        if host:
            spec["requested_destination"] = {"host": host}
        self._save_spec(inst.uuid, spec)
        task = TaskState.UNSHELVING.value
        updated = self._update(found, InstanceUpdate(task_state=task), [None], action="unshelve")
        conductor = getattr(self._services, "conductor", None)
        if conductor is not None:
            with undone_if_unsent(self._cell(found), inst.uuid, "unshelve", task):
                conductor.cast(call_context(self._context), UnshelveInstance(updated.uuid, spec))

    # --- steps -----------------------------------------------------------------------------

    def _check_host(self, host: str, zone: str | None) -> None:
        known = False
        for engine in self._services.cell_dbs.values():
            with reader(engine).connect() as conn:
                known = known or bool(server_extras.compute_services_by_host(conn, [host]))
        if not known:
            raise Invalid(f"Compute host {host} could not be found.")
        if zone is None:
            return
        with reader(self._services.api_db).connect() as conn:
            zones = sorted(zones_by_host(conn, [host]).get(host, ()))
        host_zone = zones[0] if zones else self._conf.default_availability_zone
        if host_zone != zone:
            raise Conflict(f'Host "{host}" is not in the availability zone "{zone}".')

    def _save_spec(self, uuid: str, spec: dict[str, Any]) -> None:
        # no spec saved at boot (a minimal one): the conductor gets it in the message anyway
        with (
            self._services.api_db.begin() as conn,
            contextlib.suppress(RequestSpecNotFound, TypeError, KeyError),
        ):
            request_specs.save(conn, request_specs.RequestSpec.from_primitive(spec))

    def _send(
        self,
        found: FoundServer,
        updated: Any,
        message: ShelveInstance | ShelveOffloadInstance,
        task: str,
        image_id: str | None,
    ) -> None:
        compute = self._compute()
        if compute is None:
            return
        undo = (lambda: self._forget_id(image_id)) if image_id else None
        with undone_if_unsent(self._cell(found), found.instance.uuid, message.method, task, undo):
            compute.cast(call_context(self._context), instance_host(updated), message)

    def _forget_id(self, image_id: str) -> None:
        try:
            ImageProxy(self._services, self._context).delete(image_id)
        except Exception:
            return


__all__ = ["ServerShelver", "UnshelveInstanceInvalidState"]
