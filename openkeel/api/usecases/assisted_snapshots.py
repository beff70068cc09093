"""Assisted volume snapshots (``/os-assisted-volume-snapshots``): Cinder's file-based volume
drivers ask Nova to snapshot (or merge away a snapshot of) a volume attached to a running
server, because only the host can do it while the guest writes (Nova's volume_snapshot_create
and volume_snapshot_delete).

As Nova: the volume's mapping is looked up in every cell (none: 400, more than one, a
multiattach volume: 400), the server must have a host (400, not ready), no task in progress
and have been launched (400); a delete that merges (``merge_target_file``) needs an active
server (400). The work is a cast to the server's host, whose driver does it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.create import call_context
from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices, instances
from openkeel.domain.errors import Invalid, ServiceUnavailable
from openkeel.domain.instances import Instance
from openkeel.domain.states import VmState
from openkeel.rpc.messages.compute import VolumeSnapshotCreate, VolumeSnapshotDelete

POLICY = "os_compute_api:os-assisted-volume-snapshots:%s"


def _invalid_state(inst: Instance, attr: str, state: str | None, method: str) -> Invalid:
    return Invalid(f"Instance {inst.uuid} in {attr} {state}. Cannot {method} while the "
                   "instance is in this state.")  # fmt: skip


def _delete_info(raw: str | None) -> dict[str, Any]:
    """The parsed ``delete_info`` (400 with Nova's words: the missing key, or the parser's)."""
    if raw is None:
        raise Invalid("'delete_info'")
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        raise Invalid(str(exc)) from exc
    if not isinstance(parsed, dict) or "volume_id" not in parsed:
        raise Invalid("'volume_id'")
    return parsed


class AssistedSnapshots:
    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context

    def _instance(self, volume_id: str, method: str) -> Instance:
        """The server the volume is attached to, ready for ``method``."""
        found: list[Instance] = []
        for engine in self._services.cell_dbs.values():
            with reader(engine).connect() as conn:
                mappings = block_devices.of_volume(conn, volume_id)
                if len(mappings) > 1:
                    raise Invalid(f"Block Device Mapping {volume_id} is a multi-attach volume "
                                  "and is not valid for this operation.")  # fmt: skip
                found += [instances.get(conn, m.instance_uuid) for m in mappings]
        if not found:
            raise Invalid(f"No volume Block Device Mapping with id {volume_id}.")
        inst = found[0]
        if not inst.host:
            raise Invalid(f"Instance {inst.uuid} is not ready")
        if inst.task_state is not None:
            raise _invalid_state(inst, "task_state", inst.task_state, method)
        if inst.launched_at is None:
            raise _invalid_state(inst, "launched_at", None, method)
        if self._services.compute is None:
            raise ServiceUnavailable("No compute service can be reached from this API process.")
        return inst

    def create(self, volume_id: str, create_info: Mapping[str, Any]) -> None:
        self._context.can(POLICY % "create", {})
        inst = self._instance(volume_id, "volume_snapshot_create")
        message = VolumeSnapshotCreate(inst.uuid, volume_id=volume_id,
                                       create_info=dict(create_info))  # fmt: skip
        assert self._services.compute is not None and inst.host
        self._services.compute.cast(call_context(self._context), inst.host, message)

    def delete(self, snapshot_id: str, raw_delete_info: str | None) -> None:
        """``raw_delete_info``: the query's JSON document naming the volume."""
        self._context.can(POLICY % "delete", {})
        delete_info = _delete_info(raw_delete_info)
        volume_id = str(delete_info["volume_id"])
        inst = self._instance(volume_id, "volume_snapshot_delete")
        merging = delete_info.get("merge_target_file") is not None
        if merging and inst.vm_state != VmState.ACTIVE.value:
            raise _invalid_state(inst, "vm_state", inst.vm_state, "volume_snapshot_delete")
        message = VolumeSnapshotDelete(inst.uuid, volume_id=volume_id, snapshot_id=snapshot_id,
                                       delete_info=dict(delete_info))  # fmt: skip
        assert self._services.compute is not None and inst.host
        self._services.compute.cast(call_context(self._context), inst.host, message)
