"""The evacuate server action (Nova's compute API ``evacuate``): rebuild a server of a dead
host on another host.

Checks as Nova's: lock, state (ACTIVE, SHUTOFF or ERROR), the server's compute service must
be down (forced down or silent for ``service_down_time``: 400 "Compute service of <host> is
still in use."), a named target must be a compute host (404) other than the source (400).
Then, in one transaction: task ``rebuilding``, the ``evacuate`` action and a migration of type
``evacuation`` (``accepted``); then the conductor's ``rebuild_instance`` with ``recreate``,
which picks the destination (the scheduler, unless forced) and hands it to that host. The
source host removes its guest when it comes back (compute/evacuated.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.usecases.instance_saves import notify_saved
from openkeel.api.usecases.migrate_server import stored_request_spec
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers.create import call_context, generate_password
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import instance_actions, instances, migrations, server_extras
from openkeel.domain import migrations as mstatus
from openkeel.domain.errors import Invalid, NotFound
from openkeel.domain.instances import InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.messages.conductor import RebuildInstance

EVACUATION = "evacuation"


@dataclass(frozen=True)
class Evacuation:
    host: str | None = None
    admin_pass: str | None = None
    force: bool = False
    stop: bool = False  # 2.95: the server ends stopped on the destination


class ServerEvacuator(ServerLifecycle):
    """Evacuate for one caller (an admin, by default policy)."""

    def evacuate(self, found: FoundServer, req: Evacuation) -> str:
        inst = found.instance
        self._check_lock(inst)
        self._gate("evacuate", inst)
        if self._host_up(found):
            raise Invalid(f"Compute service of {inst.host} is still in use.")
        if req.host is not None:
            if req.host == inst.host:
                raise Invalid("The target host can't be the same one.")
            with self._cell(found).connect() as conn:
                if req.host not in server_extras.compute_services_by_host(conn, [req.host]):
                    raise NotFound(f"Compute host {req.host} not found.")
        password = req.admin_pass or generate_password(int(self._conf.password_length))
        spec = stored_request_spec(self._services, inst)
        spec.update(
            ignore_hosts=[inst.host] if inst.host else [],
            requested_destination={"host": req.host} if req.host else None,
        )
        with self._cell(found).begin() as conn:
            updated = instances.update(
                conn, inst.uuid, InstanceUpdate(task_state=TaskState.REBUILDING.value),
                expected_task_state=[None],
            )  # fmt: skip
            instance_actions.start_action(
                conn, inst.uuid, "evacuate", request_id=self._context.request_id,
                user_id=self._context.user_id, project_id=self._context.project_id,
            )  # fmt: skip
            migration = migrations.create(
                conn, instance_uuid=inst.uuid, migration_type=EVACUATION,
                status=mstatus.ACCEPTED, source_compute=inst.host, source_node=inst.node,
                dest_compute=req.host, old_instance_type_id=inst.flavor.id,
                new_instance_type_id=inst.flavor.id, user_id=self._context.user_id,
                project_id=self._context.project_id,
            )  # fmt: skip
        notify_saved(self._services, self._context, inst, updated)
        conductor = getattr(self._services, "conductor", None)
        if conductor is not None:
            message = RebuildInstance(
                updated.uuid,
                image_ref=inst.image_ref or "",
                orig_image_ref=inst.image_ref or "",
                admin_password=password,
                request_spec=spec,
                host=req.host if req.force else None,
                recreate=True,
                migration=migration.to_primitive(),
                target_state="stopped" if req.stop else None,
            )
            task = TaskState.REBUILDING.value
            with undone_if_unsent(self._cell(found), inst.uuid, "evacuate", task):
                conductor.cast(call_context(self._context), message)
        return password


__all__ = ["EVACUATION", "Evacuation", "ServerEvacuator"]
