"""The rebuild server action (Nova's compute API ``rebuild``): checks, saved changes, cast.

Checks as Nova's: lock, state (ACTIVE, SHUTOFF or ERROR, no task), the image (known, active,
fits the flavor; a volume-backed server keeps its image before 2.93, from 2.93 its root volume
is reimaged with any image whose min_ram and min_disk it meets), ``key_name`` (2.54) and user
data.
Then, in one transaction, the new image, name, metadata (replaced whole), description,
access IPs, key pair, user data, hostname, task ``rebuilding`` and the ``rebuild`` instance
action; then the conductor's ``rebuild_instance`` cast (conductor -> the compute host). A new
image goes into the saved request spec, and the cast carries a spec that makes the conductor
ask the scheduler whether the instance's node accepts it (Nova's rebuild check; for a
volume-backed server "new" means other than the image its root volume holds).
Called by openkeel.api.resources.servers.handlers_rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openkeel.api.usecases.images import caller_of
from openkeel.api.usecases.migrate_server import stored_request_spec
from openkeel.api.usecases.sending import undone_if_unsent
from openkeel.api.usecases.servers import create_checks as checks
from openkeel.api.usecases.servers.create import call_context, generate_password
from openkeel.api.usecases.servers.create_building import image_spec, image_system_metadata
from openkeel.api.usecases.servers.lifecycle import ServerLifecycle
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.clients.image import Image
from openkeel.db.engine import reader
from openkeel.db.repositories import block_devices, request_specs
from openkeel.db.repositories.request_specs import RequestSpec
from openkeel.domain.errors import Invalid
from openkeel.domain.instances import UNSET, Instance, InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.messages.conductor import RebuildInstance
from openkeel.volume.adapter import VolumeContext
from openkeel.volume.factory import get_volume_adapter

# The scheduler hint that makes a select_destinations a rebuild check (Nova's name).
REBUILD_HINT = "_nova_check_type"
GIB = 1024**3


@dataclass(frozen=True)
class RebuildRequest:
    """What the request asks to change; a field left UNSET keeps its value."""

    image_ref: str
    admin_pass: str | None = None
    preserve_ephemeral: bool = False
    changes: dict[str, Any] = field(default_factory=dict)  # InstanceUpdate fields
    key_name: Any = UNSET  # 2.54: a name, or None to remove the key pair
    user_data: Any = UNSET  # 2.57
    reimage_boot_volume: bool = False  # 2.93: a volume-backed server may take a new image


@dataclass(frozen=True)
class _VolumeRoot:
    """A volume-backed server's root: the image its volume holds (None: not from an image)."""

    image_id: str | None


@dataclass(frozen=True)
class Rebuilt:
    instance: Instance
    admin_pass: str


class ServerRebuilder(ServerLifecycle):
    """Rebuild for one caller."""

    def rebuild(self, found: FoundServer, req: RebuildRequest) -> Rebuilt:
        inst = found.instance
        self._check_lock(inst)
        self._gate("rebuild", inst)
        image = checks.image(self._services, caller_of(self._context), req.image_ref)
        root = self._volume_root(found, image, req.reimage_boot_volume)
        volume_backed = root is not None
        if root is None:
            checks.image_fits(image, inst.flavor)
        orig_image_ref = root.image_id if root is not None else inst.image_ref
        changes = dict(req.changes)
        if req.key_name is not UNSET:
            pair = checks.keypair(self._services, inst.user_id, req.key_name)
            changes["key_name"] = pair.name if pair else None
            changes["key_data"] = pair.public_key if pair else None
        if req.user_data is not UNSET:
            checks.user_data(req.user_data)
            changes["user_data"] = req.user_data
        # Nova's _reset_image_metadata: the image_* keys now describe the new image
        kept = {k: v for k, v in inst.system_metadata.items() if not k.startswith("image_")}
        changes["system_metadata"] = {**kept, **image_system_metadata(image, inst.flavor.root_gb)}
        password = req.admin_pass or generate_password(int(self._conf.password_length))
        update = InstanceUpdate(
            image_ref=image.id if not volume_backed else UNSET,
            task_state=TaskState.REBUILDING.value,
            progress=0,
            **changes,
        )
        updated = self._update(found, update, [None], action="rebuild")
        spec = None
        if image.id != orig_image_ref:
            spec = self._spec_for_new_image(inst, image)
        conductor = getattr(self._services, "conductor", None)
        if conductor is not None:
            message = RebuildInstance(
                updated.uuid,
                image_ref=image.id,
                orig_image_ref=orig_image_ref or "",
                admin_password=password,
                preserve_ephemeral=req.preserve_ephemeral,
                request_spec=spec,
                # Nova: from 2.93 a volume-backed server's root volume is always reimaged
                reimage_boot_volume=req.reimage_boot_volume and volume_backed,
            )
            with undone_if_unsent(self._cell(found), inst.uuid, "rebuild", TaskState.REBUILDING.value):  # fmt: skip
                conductor.cast(call_context(self._context), message)
        return Rebuilt(updated, password)

    def _volume_root(self, found: FoundServer, image: Image, reimage: bool) -> _VolumeRoot | None:
        """The root of a volume-backed server (its root mapping is a volume, or it has no
        image), else None. Nova's checks: before 2.93 only the image the root volume was made
        from (400); the image's min_ram against the flavor and min_disk against the volume."""
        inst = found.instance
        with reader(self._cell(found)).connect() as conn:
            devices = block_devices.devices_of(conn, inst.uuid)
        root = next((d for d in devices if d.boot_index == 0 and d.is_volume), None)
        if inst.image_ref and root is None:
            return None
        original, size = None, None
        if root is not None and root.volume_id:
            volumes = get_volume_adapter(self._conf, self._services.api_db)
            ctx = self._context
            as_user = VolumeContext(ctx.project_id, ctx.user_id, ctx.is_admin, ctx.auth_token)
            volume = volumes.get(as_user, root.volume_id)
            original, size = volume.image_id, root.volume_size or volume.size
        if original != image.id and not reimage:
            raise Invalid(
                f"Image {image.id} is unacceptable: Unable to rebuild with a different image "
                "for a volume-backed server."
            )
        if inst.flavor.memory_mb < image.min_ram:
            raise Invalid("Flavor's memory is too small for requested image.")
        if size is not None and image.min_disk * GIB > size * GIB:
            raise Invalid(
                "Volume is smaller than the minimum size specified in image metadata. Volume "
                f"size is {size * GIB} bytes, minimum size is {image.min_disk * GIB} bytes."
            )
        return _VolumeRoot(original)

    def _spec_for_new_image(self, inst: Instance, image: Image) -> dict[str, Any]:
        """Nova's rebuild with a new image: the saved request spec takes the image, and the
        scheduler is asked (hint ``_nova_check_type``) whether the instance's own node
        accepts it."""
        spec = stored_request_spec(self._services, inst)
        spec["image"] = image_spec(image)
        if "project_id" in spec:  # a spec saved at boot (not the minimal stand-in)
            with self._services.api_db.begin() as conn:
                request_specs.save(conn, RequestSpec.from_primitive(spec))
        hints = {**(spec.get("scheduler_hints") or {}), REBUILD_HINT: ["rebuild"]}
        spec.update(scheduler_hints=hints, requested_destination=None, ignore_hosts=[],
                    force_hosts=[inst.host] if inst.host else [],
                    force_nodes=[inst.node] if inst.node else [])  # fmt: skip
        return spec


__all__ = ["RebuildRequest", "Rebuilt", "ServerRebuilder"]
