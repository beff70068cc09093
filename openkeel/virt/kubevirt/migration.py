"""Resize / cold migration, live migration and snapshots of KubeVirt VirtualMachines.

Mixed into KubevirtDriver. One cluster holds both ends of a migration, so the "source" and
"destination guest" are the same VirtualMachine object: resize saves the old VM spec in an
annotation, rewrites the spec for the new flavor and node, and confirm/revert drop or restore
it. Live migration is a VirtualMachineInstanceMigration (abort = delete it); KubeVirt reports
phases, not memory counters, so progress is derived from the phase.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime

from openkeel.domain.states import PowerState, TaskState
from openkeel.virt import errors
from openkeel.virt.driver import ProgressCallback, TaskStateCallback
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt import export
from openkeel.virt.kubevirt.base import LABEL_NODE, KubevirtBase, driver_error, transient
from openkeel.virt.kubevirt.client import HOSTNAME_LABEL, JsonObj, KubeError
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.nodes import parse_quantity
from openkeel.virt.model import (
    DiskTransfer,
    FlavorSpec,
    InstanceRef,
    InstanceSpec,
    LifecycleEvent,
    LifecycleTransition,
    LiveMigrationProgress,
    MigrationRef,
    SnapshotResult,
    SnapshotTarget,
)

LOG = logging.getLogger(__name__)
ANNOTATION_RESIZE = f"{naming.DOMAIN}/resize-source"
# VMIM phase -> percent done (KubeVirt exposes no memory counters in the VMIM status).
PHASE_PERCENT = {
    "": 0, "Pending": 5, "Scheduling": 10, "Scheduled": 20, "PreparingTarget": 30,
    "TargetReady": 40, "Running": 60, "Succeeded": 100,
}  # fmt: skip


class MigrationMixin(KubevirtBase):
    """Cold migration/resize, live migration and snapshot operations."""

    _aborted: set[str]

    # --- resize / cold migration -----------------------------------------------------------

    def migrate_disk_and_power_off(
        self,
        instance: InstanceSpec,
        dest_host: str,
        new_flavor: FlavorSpec,
        *,
        timeout: int = 0,
        retry_interval: int = 0,
    ) -> DiskTransfer:
        vm = self._require_vm(instance.ref)
        if ANNOTATION_RESIZE not in vm["metadata"].get("annotations", {}):
            saved = {"host": self.host, "spec": vm["spec"], "labels": vm["metadata"]["labels"]}
            patch = {"metadata": {"annotations": {ANNOTATION_RESIZE: json.dumps(saved)}}}
            self.client.patch(k.VMS, self._name(instance.ref), patch, self._ns(instance.ref))
        self._stop(instance.ref, grace_period=timeout)
        disk = {"namespace": self._ns(instance.ref), "vm": self._name(instance.ref), "source_host": self.host}  # fmt: skip
        return DiskTransfer(instance.uuid, (disk,))

    def finish_migration(
        self,
        migration: MigrationRef,
        instance: InstanceSpec,
        disks: DiskTransfer,
        *,
        resize_instance: bool,
        power_on: bool = True,
    ) -> None:
        self._require_vm(instance.ref)
        self._rewrite_for_here(instance)
        if power_on:
            self._start(instance.ref)

    def take_over(self, instance: InstanceSpec) -> bool:
        """Evacuation: the VM of a lost node is rewritten for this node (template pin, labels)
        and started here; its VMI on the lost node (Failed, or still listed) is deleted first.
        The disks are PVCs the new node mounts. False when there is no VM (spawn instead)."""
        vm = self._vm(instance.ref)
        if vm is None:
            return False
        self._rewrite_for_here(instance)
        ns, name = self._ns(instance.ref), self._name(instance.ref)
        self._retrying(lambda: self.client.delete(k.VMIS, name, ns), f"removing the old VMI of {instance.uuid}")  # fmt: skip
        self._wait_for(lambda: self.client.get_or_none(k.VMIS, name, ns) is None,
                       f"waiting for the old VMI of {instance.uuid} to go")  # fmt: skip
        self._start(instance.ref)
        return True

    def _rewrite_for_here(self, instance: InstanceSpec) -> None:
        """The VM's spec, labels and annotations as this host would build them."""
        wanted = self._manifests(instance).vm

        def rewrite(vm: JsonObj) -> None:
            vm["spec"] = {**wanted["spec"], "runStrategy": vm["spec"].get("runStrategy", "Manual")}
            vm["metadata"]["labels"].update(wanted["metadata"]["labels"])
            vm["metadata"]["annotations"].update(wanted["metadata"]["annotations"])

        self._update_vm(instance.ref, rewrite)

    def confirm_migration(self, migration: MigrationRef, instance: InstanceRef) -> None:
        if self._vm(instance) is not None:
            self._update_vm(instance, lambda vm: vm["metadata"]["annotations"].pop(ANNOTATION_RESIZE, None))  # fmt: skip

    def finish_revert_migration(
        self, migration: MigrationRef, instance: InstanceSpec, *, power_on: bool = True
    ) -> None:
        vm = self._vm(instance.ref)
        if vm is None:
            self.spawn(instance, power_on=power_on)
            return
        if ANNOTATION_RESIZE in vm["metadata"].get("annotations", {}):
            self._stop(instance.ref)
            self._restore_source(instance.ref, drop=True)
        if power_on:
            self._start(instance.ref)

    def _is_resize_destination(self, vm: JsonObj) -> bool:
        saved = vm["metadata"].get("annotations", {}).get(ANNOTATION_RESIZE)
        if saved is None:
            return False
        return bool(json.loads(saved)["host"] != self.host)

    def _drop_resize_destination(self, ref: InstanceRef, vm: JsonObj) -> None:
        """destroy() of the destination guest during a revert: the VM goes back to the
        source (stopped, old spec); the source's finish_revert_migration starts it."""
        self._stop(ref)
        self._restore_source(ref, drop=False)

    def _restore_source(self, ref: InstanceRef, *, drop: bool) -> None:
        def restore(vm: JsonObj) -> None:
            annotations = vm["metadata"]["annotations"]
            saved = json.loads(annotations[ANNOTATION_RESIZE])
            vm["spec"] = saved["spec"]
            vm["metadata"]["labels"] = saved["labels"]
            if drop:
                annotations.pop(ANNOTATION_RESIZE)

        self._update_vm(ref, restore)

    def _update_vm(self, ref: InstanceRef, mutate: k.Mutator) -> JsonObj:
        try:
            # read-modify-write: a retry after a lost answer finds nothing left to change
            return self._retrying(lambda: self.client.update(k.VMS, self._name(ref), mutate, self._ns(ref)), f"updating the VM of {ref.uuid}")  # fmt: skip
        except k.NotFoundError as exc:
            raise errors.InstanceNotFound(ref.uuid) from exc
        except KubeError as exc:
            raise driver_error(exc) from exc

    # --- live migration --------------------------------------------------------------------

    def live_migration(
        self,
        instance: InstanceRef,
        dest_host: str,
        on_progress: ProgressCallback,
        *,
        block_migration: bool = False,
    ) -> None:
        self._guest_state(instance, "live migrate", {PowerState.RUNNING, PowerState.PAUSED})
        ns, name = self._ns(instance), self._name(instance)
        node, source = self.node_for_host(dest_host), self.node
        # The VMI is pinned to its node (nodeSelector kubernetes.io/hostname); a migration's
        # addedNodeSelector can only restrict that, never override it. So the pin moves
        # first: the VM template names the destination and KubeVirt's LiveUpdate rollout
        # carries it to the running VMI; then the migration may target the destination.
        self._pin(instance, node)
        body = {
            "metadata": {"generateName": "kubevirt-migrate-vm-", "namespace": ns,
                         "labels": {naming.LABEL_SERVER_ID: instance.uuid}},
            "spec": {"vmiName": name, "addedNodeSelector": {HOSTNAME_LABEL: node}},
        }  # fmt: skip

        def request_migration() -> JsonObj:
            # A create whose answer was lost may have happened: adopt it, never start two.
            for active in self._active_migrations(instance):
                return active
            return self.client.create(k.MIGRATIONS, body)

        try:
            vmim = self._retrying(request_migration, f"requesting the migration of {instance.uuid}")
            self._aborted.discard(vmim["metadata"]["name"])
            self._follow(instance, vmim["metadata"]["name"], on_progress)
        except BaseException:
            self._unpin_after_failure(instance, source)
            raise
        self._update_vm(instance, lambda vm: vm["metadata"]["labels"].__setitem__(LABEL_NODE, naming.label_value(node)))  # fmt: skip
        self.emit_event(LifecycleEvent(instance.uuid, LifecycleTransition.MIGRATION_COMPLETED, _now()))  # fmt: skip

    def _pin(self, ref: InstanceRef, node: str) -> None:
        """Make the VM template and the running VMI select ``node``; fail (pin restored)
        when the cluster does not roll the change out to the VMI (vmRolloutStrategy Stage:
        the VM reports RestartRequired instead)."""
        source = self.node

        def select(vm: JsonObj) -> None:
            vm["spec"]["template"]["spec"].setdefault("nodeSelector", {})[HOSTNAME_LABEL] = node

        self._update_vm(ref, select)

        def pinned(vmi: JsonObj | None) -> bool:
            if vmi is None:
                raise errors.InvalidGuestState(ref.uuid, "live migrate", "shutdown")
            return bool((vmi["spec"].get("nodeSelector") or {}).get(HOSTNAME_LABEL) == node)

        refused = (f"Cannot live migrate {ref.uuid}: the VirtualMachineInstance keeps its node "
                   "selector until a restart (KubeVirt's vmRolloutStrategy must be LiveUpdate).")  # fmt: skip
        try:
            self._await_rollout(ref, pinned, refused, f"moving the node selector of {ref.uuid} to {node}")  # fmt: skip
        except BaseException:
            self._unpin_after_failure(ref, source)
            raise

    def _unpin_after_failure(self, ref: InstanceRef, source: str) -> None:
        """Point the template back at the node the guest still runs on (best effort: the
        failure being handled is the one to report)."""

        def select(vm: JsonObj) -> None:
            vm["spec"]["template"]["spec"].setdefault("nodeSelector", {})[HOSTNAME_LABEL] = source

        try:
            self._update_vm(ref, select)
        except Exception:
            LOG.exception("Could not point the VM of %s back at node %s", ref.uuid, source)

    def _follow(self, ref: InstanceRef, vmim: str, on_progress: ProgressCallback) -> None:
        ns, last, deadline = self._ns(ref), None, time.monotonic() + self.wait_timeout
        while True:
            try:
                found = self.client.get_or_none(k.MIGRATIONS, vmim, ns)
            except KubeError as exc:
                if not transient(exc) or time.monotonic() > deadline:
                    raise driver_error(exc) from exc
                time.sleep(max(self.poll_interval, 0.1))  # the API server is away: wait
                continue
            if found is None or found["metadata"].get("deletionTimestamp"):
                if vmim in self._aborted:
                    raise errors.MigrationAborted(ref.uuid)
                raise errors.PermanentDriverError(f"Migration {vmim} of {ref.uuid} disappeared.")
            phase = found.get("status", {}).get("phase", "")
            if phase == "Failed":
                raise errors.PermanentDriverError(f"Live migration of {ref.uuid} failed.")
            if phase != last:
                last = phase
                percent = PHASE_PERCENT.get(phase, 50)
                on_progress(LiveMigrationProgress(ref.uuid, 100, 100 - percent))
            if phase == "Succeeded":
                return
            if time.monotonic() > deadline:
                raise errors.TransientDriverError(f"Live migration of {ref.uuid} timed out.")
            time.sleep(self.poll_interval)

    def _active_migrations(self, ref: InstanceRef) -> list[JsonObj]:
        found = self.client.items(k.MIGRATIONS, self._ns(ref), naming.server_selector(ref.uuid))
        final = {"Succeeded", "Failed"}
        return [m for m in found if m.get("status", {}).get("phase") not in final
                and not m["metadata"].get("deletionTimestamp")]  # fmt: skip

    def live_migration_abort(self, instance: InstanceRef) -> None:
        self._require_vm(instance)
        active = self._active_migrations(instance)
        if not active:
            raise errors.InvalidGuestState(instance.uuid, "abort the migration of", "not migrating")
        for vmim in active:
            self._aborted.add(vmim["metadata"]["name"])
            self.client.delete(k.MIGRATIONS, vmim["metadata"]["name"], self._ns(instance))

    def post_live_migration_at_destination(self, instance: InstanceSpec) -> None:
        """KubeVirt moved the guest itself; make sure the VM names this host."""
        self._require_vm(instance.ref)
        label = naming.label_value(self.node)
        self._update_vm(instance.ref, lambda vm: vm["metadata"]["labels"].__setitem__(LABEL_NODE, label))  # fmt: skip

    # --- snapshot --------------------------------------------------------------------------

    def snapshot(
        self, instance: InstanceRef, target: SnapshotTarget, update_task_state: TaskStateCallback
    ) -> SnapshotResult:
        vm = self._require_vm(instance)
        ns, name = self._ns(instance), naming.dns_label(f"snapshot-{target.image_id}")
        update_task_state(TaskState.IMAGE_PENDING_UPLOAD, None)
        self.client.ensure(k.VM_SNAPSHOTS, {
            "metadata": {"name": name, "namespace": ns, "labels": {
                naming.LABEL_SERVER_ID: instance.uuid, naming.LABEL_IMAGE_ID: target.image_id}},
            "spec": {"source": {"apiGroup": "kubevirt.io", "kind": "VirtualMachine", "name": self._name(instance)}},
        })  # fmt: skip

        def ready() -> bool:
            status = self.client.get(k.VM_SNAPSHOTS, name, ns).get("status", {})
            if status.get("phase") == "Failed":
                raise errors.PermanentDriverError(f"Snapshot {name} of {instance.uuid} failed.")
            return bool(status.get("readyToUse"))

        self._wait_for(ready, f"snapshotting instance {instance.uuid}")
        update_task_state(TaskState.IMAGE_UPLOADING, TaskState.IMAGE_PENDING_UPLOAD)
        # The image's DataSource, which servers booted from the image on this cluster clone
        # (disks.image_source_ref, decision 0051) ...
        source = self._export_root(instance, target, ns)
        # ... and, for an image service that keeps bytes, the disk exported (decision 0071).
        chunks = self._export_bytes(instance, target, ns, name) if self.settings.snapshot_export else None  # fmt: skip
        return SnapshotResult(
            target.image_id, root_size_bytes(vm), target.disk_format, target.container_format,
            chunks=chunks, properties={"openkeel_kubevirt_data_source": source},
        )  # fmt: skip

    def _export_bytes(
        self, ref: InstanceRef, target: SnapshotTarget, ns: str, snapshot: str
    ) -> Iterator[bytes]:
        """A VirtualMachineExport of the VM snapshot, waited for until Ready; returns the root
        volume's bytes as a stream that deletes the export when it ends. An export that does
        not become Ready in time is deleted and the snapshot fails."""
        token = export.new_token()
        secret, vmexport = export.export_objects(
            ns, target.image_id, ref.uuid, snapshot, self.settings.export_ttl, token
        )
        # a retried snapshot finds the Secret of the first try: its token is the one in force
        token = export.secret_token(self.client.ensure(k.SECRETS, secret)) or token
        self.client.ensure(k.VM_EXPORTS, vmexport)
        name, names = vmexport["metadata"]["name"], (naming.root_data_volume_name(ref.uuid), "root")
        found: list[export.ExportLink] = []

        def ready() -> bool:
            status = self.client.get(k.VM_EXPORTS, name, ns).get("status") or {}
            link = export.pick_link(status, self.settings.export_link, names, token)
            if link is not None:
                found.append(link)
            return link is not None

        try:
            what = f"waiting for export {ns}/{name} of instance {ref.uuid}"
            self._wait_for(ready, what, self.settings.export_ready_timeout or None)
        except BaseException:
            export.remove(self.client, ns, target.image_id)
            raise
        return export.download(
            found[0], self.wait_timeout, lambda: export.remove(self.client, ns, target.image_id)
        )

    def _export_root(self, ref: InstanceRef, target: SnapshotTarget, ns: str) -> str:
        """Clone the root disk into the images namespace as the image's DataVolume, wait for
        the clone, and register the image's DataSource on it; returns ``namespace/name``."""
        images_ns = self.settings.images_namespace
        name = naming.image_data_source_name(target.image_id)
        metadata = {"name": name, "namespace": images_ns,
                    "labels": {naming.LABEL_MANAGED_BY: naming.MANAGED_BY},
                    "annotations": {naming.ANNOTATION_IMAGE_ID: target.image_id}}  # fmt: skip
        self.client.ensure_namespace(images_ns)
        self.client.ensure(k.DATA_VOLUMES, {
            "metadata": dict(metadata),
            "spec": {"source": {"pvc": {"namespace": ns, "name": naming.root_data_volume_name(ref.uuid)}},
                     "storage": {}},
        })  # fmt: skip

        def cloned() -> bool:
            phase = self.client.get(k.DATA_VOLUMES, name, images_ns).get("status", {}).get("phase")
            if phase == "Failed":
                raise errors.PermanentDriverError(f"Clone {name} of {ref.uuid}'s root disk failed.")
            return bool(phase == "Succeeded")

        self._wait_for(cloned, f"cloning the root disk of instance {ref.uuid}")
        self.client.ensure(k.DATA_SOURCES, {
            "metadata": dict(metadata),
            "spec": {"source": {"pvc": {"name": name, "namespace": images_ns}}},
        })  # fmt: skip
        return f"{images_ns}/{name}"


def _now() -> datetime:
    return datetime.now(UTC)


def root_size_bytes(vm: JsonObj) -> int:
    """Requested size of the root DataVolume template (0 when CDI sizes it)."""
    for template in vm["spec"].get("dataVolumeTemplates", []) or []:
        if template["metadata"]["name"].endswith("-root"):
            request = template["spec"].get("storage", {}).get("resources", {}).get("requests", {})
            return int(parse_quantity(request.get("storage", "0")))
    return 0
