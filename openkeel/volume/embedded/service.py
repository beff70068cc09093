"""The volume service's use cases: Cinder's rules over the rows of
:class:`openkeel.db.volume_store.VolumeStore`, the data in :class:`VolumeFiles`.

Visibility as Cinder's default policies: an admin sees everything (listing other projects'
volumes only with ``all_tenants``); a project sees its own; anything else is "not found".
Work Cinder's volume service does in the background (making the data, copying an image or a
snapshot) is done before the request returns; the reply still shows the record as the
request left it (``creating``), as Cinder's does. Status changes are compare-and-swap, so a
delete racing an attachment, or two attachments of a volume that is not multiattach, cannot
both win. Quotas are Cinder's defaults, counted per project.

Attachments follow the 3.44+ API: create (the volume is reserved), update with the host's
connector (attaching; the reply carries the connection info), complete (in-use), delete. The
older actions (os-reserve, os-attach, os-begin_detaching, os-detach, ...) are the same steps
under their old names.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from openkeel.db.volume_store import Row, VolumeStore, now
from openkeel.volume.embedded.faults import (
    BadRequest,
    Conflict,
    NotFound,
    OverLimit,
    attachment_not_found,
    invalid_volume,
    policy,
    snapshot_not_found,
    volume_not_found,
)
from openkeel.volume.embedded.files import VolumeFiles
from openkeel.volume.embedded.types import DEFAULT_TYPE, VolumeTypes, is_multiattach

__all__ = [
    "DEFAULT_TYPE", "QUOTAS", "Caller", "ImageCopy", "NovaEvents", "Row", "VolumeService",
]  # fmt: skip

QUOTAS = {
    "volumes": 10, "snapshots": 10, "gigabytes": 1000, "backups": 10, "backup_gigabytes": 1000,
    "groups": 10, "per_volume_gigabytes": -1,
}  # fmt: skip
DELETABLE = ("available", "error", "error_restoring", "error_extending", "error_managing")
_DELETE_REFUSED = (
    "Volume status must be available or error or error_restoring or error_extending or "
    "error_managing and must not be migrating, attached, belong to a group, have snapshots, "
    "awaiting a transfer, or be disassociated from snapshots after volume transfer."
)
GIB = 1024**3


@dataclass(frozen=True)
class Caller:
    """Who calls: project, user, and whether they are an administrator."""

    project_id: str | None
    user_id: str = ""
    is_admin: bool = False


@dataclass(frozen=True)
class ImageCopy:
    """An image a volume is made from: its bytes and what the volume records of it."""

    chunks: Iterable[bytes]
    size: int
    min_disk: int = 0
    metadata: Mapping[str, str] = field(default_factory=dict)


# (caller, image id) -> the image when the caller may read it, else None.
ImageSource = Callable[[Caller, str], ImageCopy | None]
# What Cinder's Nova notifier does: (server uuid, event name, tag) to the compute API's
# os-server-external-events (``volume-reimaged``); never raises.
NovaEvents = Callable[[str, str, str], None]


class ClusterBacking(Protocol):
    """What a hypervisor's storage keeps of the volumes (KubeVirt: DataVolumes in the cluster,
    decisions 0067 and 0071), told of deletions and point-in-time copies."""

    def volume_deleted(self, volume_id: str, project_id: str) -> None: ...

    def snapshot_created(self, snapshot_id: str, volume_id: str, project_id: str) -> None: ...

    def volume_cloned(
        self, volume_id: str, source_id: str, size_gb: int, project_id: str
    ) -> str: ...

    def clone_status(self, volume_id: str, project_id: str) -> str: ...

    def snapshot_deleted(self, snapshot_id: str, project_id: str) -> None: ...


def new_id() -> str:
    return str(uuid.uuid4())


def _check_image(copy: ImageCopy, size: int) -> None:
    """Cinder's check_image_metadata for a reimage: the image fits the volume."""
    image_gb = -(-copy.size // GIB)
    if image_gb > size:
        raise BadRequest(f"Invalid input received: Size of specified image {image_gb}GB is "
                         f"larger than volume size {size}GB.")  # fmt: skip
    if size < copy.min_disk:
        raise BadRequest(f"Invalid input received: Volume size {size}GB cannot be smaller "
                         f"than the image minDisk size {copy.min_disk}GB.")  # fmt: skip


class VolumeService:
    """Volumes, snapshots and attachments with Cinder's rules."""

    def __init__(
        self,
        store: VolumeStore,
        files: VolumeFiles,
        images: ImageSource | None = None,
        zone: str = "nova",
        host: str = "openkeel@simulated#simulated",
        nova: NovaEvents | None = None,
        backing: ClusterBacking | None = None,
    ) -> None:
        self.store = store
        self.files = files
        self._images = images
        self.nova = nova
        self.backing = backing
        self.zone = zone
        self.host = host
        self.types = VolumeTypes(store)

    # -- visibility -------------------------------------------------------------------------

    def _owned(self, caller: Caller, row: Row) -> bool:
        return caller.is_admin or row["project_id"] == caller.project_id

    def visible(self, caller: Caller, kind: str, all_projects: bool = False) -> list[Row]:
        """The caller's rows of ``kind`` (every project's: admins asking ``all_projects``)."""
        rows = (self.store.list(kind) if caller.is_admin and all_projects
                else self.store.list(kind, project_id=caller.project_id or ""))  # fmt: skip
        return [self._settled(r) for r in rows] if kind == "volumes" else rows

    def volume(self, caller: Caller, ident: str) -> Row:
        row = self.store.get("volumes", ident)
        if row is None or not self._owned(caller, row):
            raise volume_not_found(ident)
        return self._settled(row)

    def _settled(self, row: Row) -> Row:
        """A volume the cluster is cloning (``source_volid`` on KubeVirt) is ``creating``
        until the clone is done: asked of the backing whenever the volume is read."""
        if row["status"] != "creating" or not row["source_volid"] or self.backing is None:
            return row
        status = self.backing.clone_status(row["id"], row["project_id"])
        if status == "creating":
            return row
        settled = self.store.swap("volumes", row["id"], ("creating",), {"status": status})
        return settled or self.store.get("volumes", row["id"]) or row

    def snapshot(self, caller: Caller, ident: str) -> Row:
        row = self.store.get("snapshots", ident)
        if row is None or not self._owned(caller, row):
            raise snapshot_not_found(ident)
        return row

    def attachment(self, caller: Caller, ident: str) -> Row:
        row = self.store.get("attachments", ident)
        if row is None or not self._owned(caller, row):
            raise attachment_not_found(ident)
        return row

    def attachments_of(self, volume_id: str) -> list[Row]:
        return self.store.list("attachments", volume_id=volume_id)

    # -- quotas -----------------------------------------------------------------------------

    def usage(self, project_id: str) -> dict[str, int]:
        """The project's counts, also per volume type (``volumes_<type name>``, ...: Cinder's
        per-type quota resources; a snapshot counts for its volume's type)."""
        volumes = self.store.list("volumes", project_id=project_id)
        snapshots = self.store.list("snapshots", project_id=project_id)
        used = {
            "volumes": len(volumes),
            "snapshots": len(snapshots),
            "gigabytes": sum(v["size"] for v in volumes) + sum(s["size"] for s in snapshots),
        }
        names = {t["id"]: t["name"] for t in self.store.list("types")}
        type_of = {v["id"]: names.get(v["volume_type_id"]) for v in volumes}
        for name in names.values():
            for kind in ("volumes", "snapshots", "gigabytes"):
                used[f"{kind}_{name}"] = 0
        for volume in volumes:
            if type_of[volume["id"]] is not None:
                used[f"volumes_{type_of[volume['id']]}"] += 1
                used[f"gigabytes_{type_of[volume['id']]}"] += volume["size"]
        for snap in snapshots:
            name = type_of.get(snap["volume_id"])
            if name is not None:
                used[f"snapshots_{name}"] += 1
                used[f"gigabytes_{name}"] += snap["size"]
        return used

    def _check_quota(self, project_id: str, kind: str, size: int) -> None:
        used = self.usage(project_id)
        if used[kind] + 1 > QUOTAS[kind]:
            word = "VolumeLimitExceeded" if kind == "volumes" else "SnapshotLimitExceeded"
            raise OverLimit(f"{word}: Maximum number of {kind} allowed ({QUOTAS[kind]}) "
                            f"exceeded for quota '{kind}'.")  # fmt: skip
        if used["gigabytes"] + size > QUOTAS["gigabytes"]:
            word = "VolumeSize" if kind == "volumes" else "SnapshotSize"
            raise OverLimit(
                f"{word}ExceedsAvailableQuota: Requested volume or snapshot exceeds allowed "
                f"gigabytes quota. Requested {size}G, quota is {QUOTAS['gigabytes']}G and "
                f"{used['gigabytes']}G has been consumed."
            )

    # -- volumes ----------------------------------------------------------------------------

    def create_volume(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        """A new volume, blank or from a snapshot, a volume or an image; the reply is the row
        as created (``creating``), the data is made before returning."""
        project = caller.project_id
        if not project:
            raise BadRequest("A project is required.")
        size, origin = self._origin(caller, ref)
        zone = ref.get("availability_zone") or self.zone
        if zone != self.zone:
            raise BadRequest(f"Invalid input received: Availability zone '{zone}' is invalid.")
        vtype = self.types.for_volume(ref.get("volume_type"), caller.is_admin)
        self._check_quota(project, "volumes", size)
        values = {
            "id": new_id(), "project_id": project, "user_id": caller.user_id,
            "status": "creating", "name": ref.get("name"), "description": ref.get("description"),
            "size": size, "availability_zone": zone, "volume_type_id": vtype["id"],
            "snapshot_id": ref.get("snapshot_id"), "source_volid": ref.get("source_volid"),
            "image_id": ref.get("imageRef"), "metadata": dict(ref.get("metadata") or {}),
            "multiattach": is_multiattach(vtype), "attach_status": "detached",
            "bootable": origin is not None and isinstance(origin, ImageCopy),
            "image_metadata": dict(origin.metadata) if isinstance(origin, ImageCopy) else {},
        }  # fmt: skip
        created = self.store.insert("volumes", values)
        self._make_data(created, origin)
        return created

    def _origin(self, caller: Caller, ref: Mapping[str, Any]) -> tuple[int, Any]:
        """The size and where the data comes from (None, a snapshot row, a volume row, an
        image copy); Cinder's 400s and 404s."""
        size = ref.get("size")
        sources = [k for k in ("snapshot_id", "source_volid", "imageRef") if ref.get(k)]
        if len(sources) > 1:
            raise BadRequest("Invalid input received: Only one of snapshot_id, source_volid "
                             "and imageRef may be given.")  # fmt: skip
        origin: Any = None
        least = 1
        if "snapshot_id" in sources:
            origin = self.snapshot(caller, ref["snapshot_id"])
            if origin["status"] != "available":
                raise BadRequest("Invalid snapshot: Originating snapshot status must be one of "
                                 "'available' values")  # fmt: skip
            least = origin["size"]
        elif "source_volid" in sources:
            origin = self.volume(caller, ref["source_volid"])
            if origin["status"] not in ("available", "in-use"):
                raise invalid_volume("Volume status must be available to clone.")
            least = origin["size"]
        elif "imageRef" in sources:
            origin = self._images(caller, ref["imageRef"]) if self._images else None
            if origin is None:
                raise BadRequest("Invalid image identifier or unable to access requested image.")
            least = max(origin.min_disk, -(-origin.size // GIB), 1)
        if size is None:
            if not sources or "imageRef" in sources:
                raise BadRequest("Invalid input received: Size must be specified.")
            size = least
        if size < least:
            what = "image" if "imageRef" in sources else "source"
            raise BadRequest(f"Invalid input received: Volume size '{size}GB' cannot be smaller "
                             f"than the {what} size {least}GB. They must be >= original "
                             f"{what} size.")  # fmt: skip
        return size, origin

    def _make_data(self, row: Row, origin: Any) -> None:
        ident = row["id"]
        try:
            if isinstance(origin, ImageCopy):
                self.files.write(ident, origin.chunks, row["size"] * GIB)
            elif origin is not None:
                source = ("snapshot-" if "volume_id" in origin else "") + origin["id"]
                self.files.copy(source, ident, row["size"] * GIB)
            else:
                self.files.create(ident, row["size"] * GIB)
        except Exception:
            self.store.swap("volumes", ident, ("creating",), {"status": "error"})
            raise
        status = "available"
        if self.backing is not None and row["source_volid"]:
            # ``creating`` while the cluster clones it (see _settled), as a Cinder clone
            status = self.backing.volume_cloned(ident, row["source_volid"], row["size"], row["project_id"])  # fmt: skip
        if status != "creating":
            self.store.swap("volumes", ident, ("creating",), {"status": status})

    def update_volume(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        self.volume(caller, ident)
        values = {k: ref[k] for k in ("name", "description", "metadata") if k in ref}
        found = self.store.update("volumes", ident, values)
        if found is None:
            raise volume_not_found(ident)
        return found

    def delete_volume(self, caller: Caller, ident: str, cascade: bool = False) -> None:
        row = self.volume(caller, ident)
        snapshots = self.store.list("snapshots", volume_id=ident)
        if (snapshots and not cascade) or row["attach_status"] != "detached":
            raise invalid_volume(_DELETE_REFUSED)
        if self.store.swap("volumes", ident, DELETABLE, {"status": "deleting"}) is None:
            raise invalid_volume(_DELETE_REFUSED)
        for snapshot in snapshots:
            self.files.delete("snapshot-" + snapshot["id"])
            self.store.delete("snapshots", snapshot["id"])
        self.files.delete(ident)
        self.store.delete("volumes", ident)
        if self.backing is not None:
            for snapshot in snapshots:
                self.backing.snapshot_deleted(snapshot["id"], row["project_id"])
            self.backing.volume_deleted(ident, row["project_id"])

    def extend(self, caller: Caller, ident: str, new_size: int, in_use: bool) -> Row:
        """Grow the volume; in use only when the caller's microversion allows (3.42)."""
        row = self.volume(caller, ident)
        allowed = ("available", "in-use") if in_use else ("available",)
        if row["status"] not in allowed:
            raise invalid_volume(f"Volume status must be {' or '.join(allowed)} to extend, "
                                 f"but current status is: {row['status']}.")  # fmt: skip
        if new_size <= row["size"]:
            raise BadRequest("Invalid input received: New size for extend must be greater than "
                             f"current size. (current: {row['size']}, extended: {new_size}).")  # fmt: skip
        self._check_quota_growth(row["project_id"], new_size - row["size"])
        status = row["status"]
        if self.store.swap("volumes", ident, (status,), {"status": "extending"}) is None:
            raise invalid_volume("Volume status changed while extending.")
        self.files.resize(ident, new_size * GIB)
        done = self.store.swap("volumes", ident, ("extending",),
                               {"status": status, "size": new_size})  # fmt: skip
        assert done is not None
        return done

    def _check_quota_growth(self, project_id: str, more: int) -> None:
        used = self.usage(project_id)["gigabytes"]
        if used + more > QUOTAS["gigabytes"]:
            raise OverLimit(
                "VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed "
                f"gigabytes quota. Requested {more}G, quota is {QUOTAS['gigabytes']}G and "
                f"{used}G has been consumed."
            )

    def reimage(self, caller: Caller, ident: str, image_id: str, reserved: bool = False) -> None:
        """Cinder's ``os-reimage`` (3.68): the volume's data rewritten from the image and its
        image metadata replaced. Refused (409) for a volume with more than one attachment,
        (400) unless available or error, or reserved with ``reserved`` (Nova's rebuild).
        Then, as Cinder's volume manager: a failure leaves the volume ``error`` and tells
        nobody; success gives the volume its status back and, when it was reserved, sends
        ``volume-reimaged`` for each server it is attached to."""
        row = self.volume(caller, ident)
        copy = self._images(caller, image_id) if self._images else None
        if copy is None:
            raise NotFound(f"Image {image_id} could not be found.")
        if len(self.attachments_of(ident)) > 1:
            raise Conflict("Cannot re-image a volume which is attached to more than one server.")
        expected = ("available", "error", "reserved") if reserved else ("available", "error")
        previous = row["status"]
        if self.store.swap("volumes", ident, (previous,) if previous in expected else (),
                           {"status": "downloading"}) is None:  # fmt: skip
            statuses = ", ".join(expected[:-1]) + " or " + expected[-1]
            raise invalid_volume(f"Volume {ident} status must be {statuses}, but current "
                                 f"status is {row['status']}.")  # fmt: skip
        try:
            _check_image(copy, row["size"])
        except BadRequest:
            self.store.swap("volumes", ident, ("downloading",), {"status": previous})
            raise
        try:
            self.files.write(ident, copy.chunks, row["size"] * GIB)
        except Exception:
            self.store.swap("volumes", ident, ("downloading",), {"status": "error"})
            return
        self.store.swap("volumes", ident, ("downloading",), {
            "status": previous, "image_id": image_id, "image_metadata": dict(copy.metadata),
        })  # fmt: skip
        if previous == "reserved" and self.nova is not None:
            for attachment in self.attachments_of(ident):
                if attachment["instance_uuid"]:
                    self.nova(attachment["instance_uuid"], "volume-reimaged", ident)

    def set_bootable(self, caller: Caller, ident: str, bootable: bool) -> None:
        self.volume(caller, ident)
        self.store.update("volumes", ident, {"bootable": bootable})

    def reset_status(self, caller: Caller, kind: str, ident: str, ref: Mapping[str, Any]) -> None:
        if not caller.is_admin:
            raise policy(f"volume_extension:{kind[:-1]}_admin_actions:reset_status")
        row = self.volume(caller, ident) if kind == "volumes" else self.snapshot(caller, ident)
        names = (
            ("status", "attach_status", "migration_status") if kind == "volumes" else ("status",)
        )
        values = {k: ref[k] for k in names if k in ref}
        self.store.update(kind, row["id"], values)

    # -- snapshots --------------------------------------------------------------------------

    def create_snapshot(self, caller: Caller, ref: Mapping[str, Any]) -> Row:
        volume = self.volume(caller, ref["volume_id"])
        allowed = ("available", "in-use") if ref.get("force") else ("available",)
        if volume["status"] not in allowed:
            raise invalid_volume(f"Volume {volume['id']} status must be available, but current "
                                 f"status is: {volume['status']}.")  # fmt: skip
        self._check_quota(volume["project_id"], "snapshots", volume["size"])
        values = {
            "id": new_id(), "project_id": volume["project_id"], "user_id": caller.user_id,
            "status": "creating", "name": ref.get("name"), "description": ref.get("description"),
            "volume_id": volume["id"], "size": volume["size"],
            "metadata": dict(ref.get("metadata") or {}),
        }  # fmt: skip
        created = self.store.insert("snapshots", values)
        try:
            self.files.copy(volume["id"], "snapshot-" + created["id"], volume["size"] * GIB)
        except Exception:
            self.store.swap("snapshots", created["id"], ("creating",), {"status": "error"})
            raise
        if self.backing is not None:
            self.backing.snapshot_created(created["id"], volume["id"], volume["project_id"])
        self.store.swap("snapshots", created["id"], ("creating",), {"status": "available"})
        return created

    def update_snapshot(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> Row:
        self.snapshot(caller, ident)
        values = {k: ref[k] for k in ("name", "description", "metadata") if k in ref}
        found = self.store.update("snapshots", ident, values)
        if found is None:
            raise snapshot_not_found(ident)
        return found

    def delete_snapshot(self, caller: Caller, ident: str) -> None:
        self.snapshot(caller, ident)
        if self.store.swap("snapshots", ident, ("available", "error"),
                           {"status": "deleting"}) is None:  # fmt: skip
            raise BadRequest("Invalid snapshot: Volume Snapshot status must be available or "
                             "error.")  # fmt: skip
        self.files.delete("snapshot-" + ident)
        row = self.store.get("snapshots", ident)
        self.store.delete("snapshots", ident)
        if self.backing is not None and row is not None:
            self.backing.snapshot_deleted(ident, row["project_id"])

    # -- attachments ------------------------------------------------------------------------

    def create_attachment(
        self,
        caller: Caller,
        volume_id: str,
        instance_uuid: str | None,
        connector: Mapping[str, Any] | None = None,
        mode: str = "rw",
    ) -> Row:
        """Reserve the volume for ``instance_uuid`` (with a connector: ready to attach)."""
        volume = self.volume(caller, volume_id)
        # Cinder's: a multiattach volume may also be in use, but not half-way attaching.
        expected = ("available", "in-use") if volume["multiattach"] else ("available",)
        reserved = self.store.swap("volumes", volume_id, expected, {"status": "reserved"})
        # Cinder's override: a server the volume is in use by may reserve it again (a
        # volume-backed rebuild's new attachment before the old one goes); status unchanged.
        # Cinder overrides for a reserved volume too; here a reservation stays exclusive.
        again = (
            volume["status"] == "in-use"
            and instance_uuid is not None
            and any(a["instance_uuid"] == instance_uuid for a in self.attachments_of(volume_id))
        )
        if reserved is None and not again:
            raise invalid_volume(
                f"Volume {volume_id} status must be available or downloading to reserve, but "
                f"the current status is {volume['status']}."
            )
        values = {
            "id": new_id(), "project_id": volume["project_id"], "user_id": caller.user_id,
            "status": "reserved", "volume_id": volume_id, "instance_uuid": instance_uuid,
            "attach_mode": mode, "connector": {},
        }  # fmt: skip
        created = self.store.insert("attachments", values)
        if connector:
            return self.update_attachment(caller, created["id"], connector)
        return created

    def update_attachment(self, caller: Caller, ident: str, connector: Mapping[str, Any]) -> Row:
        """Record the host's connector: the attachment is attaching, its connection known."""
        row = self.attachment(caller, ident)
        values = {"status": "attaching", "connector": dict(connector),
                  "host_name": connector.get("host"),
                  "mountpoint": connector.get("mountpoint")}  # fmt: skip
        found = self.store.update("attachments", ident, values)
        self.store.swap("volumes", row["volume_id"], ("reserved", "available"),
                        {"status": "attaching", "attach_status": "attaching"})  # fmt: skip
        assert found is not None
        return found

    def connection_info(self, row: Row) -> dict[str, Any] | None:
        """What a host needs to reach the volume: a local file for the simulated driver; for a
        host whose connector says ``kubevirt`` (decision 0067), the PVC the volume is in the
        server's namespace (a CDI DataVolume the host makes once: blank, or from the image the
        volume was created from), as a CSI-backed Cinder's would name it."""
        if not row["connector"]:
            return None
        if row["connector"].get("kubevirt"):
            volume = self.store.get("volumes", row["volume_id"]) or {}
            return {
                "driver_volume_type": "kubevirt",
                "attachment_id": row["id"],
                "data": {"volume_id": row["volume_id"], "access_mode": row["attach_mode"],
                         "claim_name": f"volume-{row['volume_id']}", "claim_kind": "dataVolume",
                         "namespace": None, "size_gb": volume.get("size"),
                         "populate": self._populate(volume)},
            }  # fmt: skip
        return {
            "driver_volume_type": "local",
            "attachment_id": row["id"],
            "data": {"device_path": str(self.files.path(row["volume_id"])),
                     "volume_id": row["volume_id"], "access_mode": row["attach_mode"]},
        }  # fmt: skip

    def _populate(self, volume: Mapping[str, Any]) -> dict[str, Any]:
        """How a KubeVirt host makes the volume's DataVolume: from its image, as a CDI clone of
        its snapshot's point-in-time copy (``volume-snapshot-<id>``, made by the backing when
        the snapshot was taken) or, when there is none (the source volume never reached the
        cluster), as the source volume was made; else blank. A volume cloned from another one
        that was in the cluster has its DataVolume already (the backing's clone, made at
        creation); otherwise it is made as its source was."""
        if volume.get("image_id"):
            return {"image_id": volume["image_id"]}
        snapshot = self.store.get("snapshots", volume["snapshot_id"]) if volume.get("snapshot_id") else None  # fmt: skip
        if snapshot is not None:
            source = self.store.get("volumes", snapshot["volume_id"]) or {}
            return {"clone": {"name": f"volume-snapshot-{snapshot['id']}"},
                    "otherwise": self._populate(source)}  # fmt: skip
        origin = self.store.get("volumes", volume["source_volid"]) if volume.get("source_volid") else None  # fmt: skip
        if origin is not None:
            return self._populate(origin)
        return {"blank": {}}

    def complete_attachment(self, caller: Caller, ident: str) -> None:
        row = self.attachment(caller, ident)
        self.store.update("attachments", ident, {"status": "attached", "attached_at": now()})
        self.store.update("volumes", row["volume_id"],
                          {"status": "in-use", "attach_status": "attached"})  # fmt: skip

    def delete_attachment(self, caller: Caller, ident: str) -> str:
        """Remove the attachment; the volume is available again when it was the last one.
        The volume's attach status afterwards."""
        row = self.attachment(caller, ident)
        self.store.delete("attachments", ident)
        return self.settle(row["volume_id"])

    def settle(self, volume_id: str) -> str:
        left = self.attachments_of(volume_id)
        if any(a["status"] == "attached" for a in left):
            status, attach = "in-use", "attached"
        elif left:
            status, attach = "reserved", "reserved"
        else:
            status, attach = "available", "detached"
        self.store.update("volumes", volume_id, {"status": status, "attach_status": attach})
        return attach

    # -- the actions before the attachments API ----------------------------------------------

    def reserve(self, caller: Caller, ident: str) -> None:
        volume = self.volume(caller, ident)
        expected = ("available", "in-use") if volume["multiattach"] else ("available",)
        if self.store.swap("volumes", ident, expected, {"status": "attaching"}) is None:
            raise invalid_volume("status must be available or downloading to reserve, but "
                                 f"the current status is {volume['status']}.")  # fmt: skip

    def unreserve(self, caller: Caller, ident: str) -> None:
        self.volume(caller, ident)
        if not self.attachments_of(ident):
            self.store.swap("volumes", ident, ("attaching", "reserved"),
                            {"status": "available", "attach_status": "detached"})  # fmt: skip
        else:
            self.settle(ident)

    def attach(self, caller: Caller, ident: str, ref: Mapping[str, Any]) -> None:
        volume = self.volume(caller, ident)
        if volume["status"] not in ("attaching", "reserved", "available", "in-use"):
            raise invalid_volume(f"Volume status must be attaching, current status is "
                                 f"{volume['status']}.")  # fmt: skip
        values = {
            "id": new_id(), "project_id": volume["project_id"], "user_id": caller.user_id,
            "status": "attached", "volume_id": ident, "instance_uuid": ref.get("instance_uuid"),
            "attach_mode": ref.get("mode") or "rw", "connector": {},
            "host_name": ref.get("host_name"), "mountpoint": ref.get("mountpoint"),
            "attached_at": now(),
        }  # fmt: skip
        self.store.insert("attachments", values)
        self.settle(ident)

    def begin_detaching(self, caller: Caller, ident: str) -> None:
        self.volume(caller, ident)
        if self.store.swap("volumes", ident, ("in-use",), {"status": "detaching"}) is None:
            raise invalid_volume("Unable to detach volume. Volume status must be 'in-use' and "
                                 "attach_status must be 'attached' to detach.")  # fmt: skip

    def roll_detaching(self, caller: Caller, ident: str) -> None:
        self.volume(caller, ident)
        self.store.swap("volumes", ident, ("detaching",), {"status": "in-use"})

    def detach(self, caller: Caller, ident: str, attachment_id: str | None) -> None:
        self.volume(caller, ident)
        attachments = self.attachments_of(ident)
        if attachment_id:
            attachments = [a for a in attachments if a["id"] == attachment_id]
        elif len(attachments) > 1:
            raise invalid_volume("Detach volume failed, because there are multiple attachments "
                                 "of this volume, please specify attachment_id.")  # fmt: skip
        for attachment in attachments:
            self.store.delete("attachments", attachment["id"])
        self.settle(ident)
