"""The ``os-volumes`` and ``os-snapshots`` proxies (up to 2.35): the project's volumes and
snapshots through the volume adapter, as Nova passes them through to Cinder. Policies target
the caller's own project (Nova's)."""

from __future__ import annotations

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.volume.adapter import NewVolume, SnapshotInfo, VolumeContext, VolumeInfo
from openkeel.volume.factory import get_volume_adapter

POLICY = "os_compute_api:os-volumes:%s"


class VolumeProxy:
    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._context = context
        self._volumes = get_volume_adapter(services.conf, services.api_db)
        self._as = VolumeContext(context.project_id, context.user_id, context.is_admin,
                                 auth_token=context.auth_token)  # fmt: skip

    def _can(self, rule: str) -> None:
        self._context.can(POLICY % rule, {"project_id": self._context.project_id})

    def list_volumes(self, rule: str) -> list[VolumeInfo]:
        self._can(rule)
        return self._volumes.list_volumes(self._as)

    def show_volume(self, volume_id: str) -> VolumeInfo:
        self._can("show")
        return self._volumes.get(self._as, volume_id)

    def create_volume(self, wanted: NewVolume) -> VolumeInfo:
        self._can("create")
        if wanted.snapshot_id is not None:
            snapshot = self._volumes.get_snapshot(self._as, wanted.snapshot_id)
            if wanted.size is None:
                wanted = NewVolume(**{**wanted.__dict__, "size": snapshot.size})
        return self._volumes.create_volume(self._as, wanted)

    def delete_volume(self, volume_id: str) -> None:
        self._can("delete")
        self._volumes.delete(self._as, volume_id)

    def list_snapshots(self, rule: str) -> list[SnapshotInfo]:
        self._can(f"snapshots:{rule}")
        return self._volumes.list_snapshots(self._as)

    def show_snapshot(self, snapshot_id: str) -> SnapshotInfo:
        self._can("snapshots:show")
        return self._volumes.get_snapshot(self._as, snapshot_id)

    def create_snapshot(
        self, volume_id: str, name: str | None, description: str | None, force: bool
    ) -> SnapshotInfo:
        self._can("snapshots:create")
        return self._volumes.create_snapshot(self._as, volume_id, name, description, force)

    def delete_snapshot(self, snapshot_id: str) -> None:
        self._can("snapshots:delete")
        self._volumes.delete_snapshot(self._as, snapshot_id)
