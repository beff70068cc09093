"""KubevirtDriver: Nova servers as KubeVirt VirtualMachines (issue 4).

Built by compute's composition root (``compute_driver = kubevirt``) from ``[kubevirt]``
options with :func:`from_conf`. Host and lifecycle operations live here; resize, live migration
and snapshots in migration.py; volume hot-plug in volumes.py; consoles and diagnostics in devices.py. Mapping of
every operation: /work/shared/spec/kubevirt-mapping.md; choices: docs/decisions (kubevirt driver).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from openkeel.domain.states import PowerState
from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt import diagnostics
from openkeel.virt.kubevirt.base import (
    ANNOTATION_SPEC_HASH,
    LABEL_NODE,
    NODE_NAME_LABEL,
    driver_error,
    vm_cpus,
    vm_memory_mb,
)
from openkeel.virt.kubevirt.client import JsonObj, KubeClient, KubeConfig, KubeError
from openkeel.virt.kubevirt.devices import DevicesMixin
from openkeel.virt.kubevirt.images import ImagesMixin
from openkeel.virt.kubevirt.interfaces import AddressTracker, InterfacesMixin, cluster_addresses
from openkeel.virt.kubevirt.manifests import naming
from openkeel.virt.kubevirt.manifests import vm as vm_manifests
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings, settings_from_conf
from openkeel.virt.kubevirt.migration import ANNOTATION_RESIZE, MigrationMixin
from openkeel.virt.kubevirt.nodes import NodeCapacity, node_capacity
from openkeel.virt.kubevirt.passwords import PasswordMixin
from openkeel.virt.kubevirt.rescue import RescueMixin
from openkeel.virt.kubevirt.security_groups import SecurityGroupsMixin
from openkeel.virt.kubevirt.state import ANNOTATION_SUSPENDED, power_state, resource_version
from openkeel.virt.kubevirt.virtapi import HttpVirtApi, VirtApi
from openkeel.virt.kubevirt.volumes import VolumesMixin
from openkeel.virt.kubevirt.watch import Watcher
from openkeel.virt.model import (
    HostResources,
    InjectedFile,
    InstanceInfo,
    InstanceRef,
    InstanceSpec,
    InventoryPolicy,
    NetworkInterface,
    NodeInventory,
    RebootType,
)
from openkeel.virt.uptime import uptime_line

LOG = logging.getLogger(__name__)
RUNNING_LIKE = {PowerState.RUNNING, PowerState.PAUSED, PowerState.SUSPENDED}


class KubevirtDriver(
    MigrationMixin,
    RescueMixin,
    PasswordMixin,
    VolumesMixin,
    DevicesMixin,
    InterfacesMixin,
    ImagesMixin,
    SecurityGroupsMixin,
):
    """One compute host = one Kubernetes node; guests = VirtualMachines pinned to it."""

    # trigger_crash_dump: KubeVirt has no NMI subresource (virt-api offers reset, pause,
    # softreboot... but no way to inject an NMI), so Nova's "not supported" answer.
    unsupported = frozenset({
        "live_migration_force_complete", "trigger_crash_dump",
        # A Node is not the compute host's to cordon, power or drain (os-hosts, up to 2.42):
        # disable the compute service instead, as with Nova's libvirt driver.
        "set_host_enabled", "host_power_action", "host_maintenance_mode",
        # A VM's hot-plugged PVC cannot be copied to another live (no block job as libvirt's
        # blockRebase), a PVC's growth reaches the guest without the host's help, and
        # assisted snapshots are for file-based Cinder drivers (libvirt's qcow2 overlays):
        # Nova's drivers other than libvirt answer these so.
        "swap_volume", "extend_volume", "volume_snapshot_create", "volume_snapshot_delete",
    })  # fmt: skip

    def __init__(self, client: KubeClient, settings: KubevirtSettings, virt_api: VirtApi, *, owns_client: bool = False, **kw: Any) -> None:  # fmt: skip
        super().__init__(client, settings, virt_api, **kw)
        self._watcher: Watcher | None = None
        self._aborted: set[str] = set()
        # from_conf's driver made its client (and HTTP virt-api) and closes it at cleanup_host;
        # a client handed in (tests share one) stays its giver's to close.
        self._owns_client = owns_client
        self.addresses = AddressTracker(self.emit_event)

    # --- host ------------------------------------------------------------------------------

    def init_host(self, host: str) -> None:
        self.host = host
        if self.client.closed and self._owns_client:
            self._reopen_client()
        if not self.client.ready():
            raise errors.TransientDriverError(f"Kubernetes API {self.client.config.server} is not ready.")  # fmt: skip
        if self.watch_events and self._watcher is None:
            selector = f"{NODE_NAME_LABEL}={self.node}"
            self._watcher = Watcher(self.client, k.VMIS, self._on_vmi, label_selector=selector)
            self._watcher.start()

    def cleanup_host(self, host: str) -> None:
        """Stop and join the VMI watch (it holds its own connection), then close the client
        if this driver made it: in that order, so no thread reads a socket being closed."""
        if self._watcher is not None:
            self._watcher.stop()  # logs if it could not join (close() still waits for it)
            self._watcher = None
        if self._owns_client:
            self.client.close()

    def _reopen_client(self) -> None:
        """init_host after cleanup_host: a new client for the same API server."""
        old, self.client = self.client, KubeClient(self.client.config, self.client.timeout)
        if isinstance(self.virt_api, HttpVirtApi) and self.virt_api.client is old:
            self.virt_api.client = self.client

    def _on_vmi(self, kind: str, vmi: JsonObj) -> None:
        """VMI watch → lifecycle events (guest powered off by itself, crashed, moved)."""
        uuid = vmi.get("metadata", {}).get("labels", {}).get(naming.LABEL_SERVER_ID)
        if uuid:
            state = PowerState.SHUTDOWN if kind == "DELETED" else power_state(vmi)
            self.tracker.observe(uuid, state, resource_version(vmi))
            if kind == "DELETED":
                self.addresses.forget(uuid)
            else:
                self.addresses.observe(uuid, cluster_addresses(vmi, self.settings))

    def host_up(self) -> bool:
        """The Node's Ready condition (a Node that is gone is not up); True while the API
        server does not answer (nothing is known then: no flapping on a blip); False, logged,
        when it refuses our credentials (this host cannot manage its guests)."""
        try:
            found = self.client.get_or_none(k.NODES, self.node)
        except KubeError as exc:
            if exc.status in (401, 403):
                LOG.error("Kubernetes API refuses node %s to this host: %s", self.node, exc)
                return False
            return True
        return found is not None and node_capacity(found).ready

    def get_host_uptime(self) -> str:
        """Measured from the Node's last transition to Ready (Kubernetes reports no boot
        time); NotSupported when the Node is gone, not Ready or does not say since when."""
        try:
            found = self.client.get_or_none(k.NODES, self.node)
        except KubeError as exc:
            raise _error(exc) from exc
        since = diagnostics.ready_since(found) if found is not None else None
        if since is None:
            raise self._not_supported("get_host_uptime")
        return uptime_line(datetime.now(UTC), since)

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        return [self.node]

    def _node(self, nodename: str) -> NodeCapacity:
        found = self.client.get_or_none(k.NODES, nodename) if nodename == self.node else None
        if found is None:
            raise errors.PermanentDriverError(f"Node {nodename} is not managed by host {self.host}.")  # fmt: skip
        return node_capacity(found)

    def get_available_resource(self, nodename: str) -> HostResources:
        node = self._node(nodename)
        vmis = self.client.items(k.VMIS, None, f"{NODE_NAME_LABEL}={nodename}")
        domains = [v.get("spec", {}).get("domain", {}) for v in vmis]
        major, minor, patch = ([int(p) for p in node.kernel_version.split("-")[0].split(".")[:3] if p.isdigit()] + [0, 0, 0])[:3]  # fmt: skip
        return HostResources(
            nodename=nodename,
            vcpus=node.vcpus,
            memory_mb=node.memory_mb,
            local_gb=node.disk_gb,
            vcpus_used=sum(vm_cpus(d) for d in domains),
            memory_mb_used=sum(vm_memory_mb(d) for d in domains),
            local_gb_used=0,  # disks are PVCs in the storage backend, not node-local
            hypervisor_type="QEMU",
            hypervisor_version=major * 1_000_000 + minor * 1000 + patch,
            hypervisor_hostname=nodename,
            disk_available_least=node.disk_gb,
            running_vms=len(vmis),
            # KubeVirt guests are KVM (hvm) machines of the node's architecture.
            supported_instances=((node.architecture, "kvm", "hvm"),),
        )

    def get_inventory(self, nodename: str, policy: InventoryPolicy) -> NodeInventory:
        return NodeInventory.standard(nodename, self.get_available_resource(nodename), policy)

    def availability_zone(self, nodename: str) -> str | None:
        """The node's ``topology.kubernetes.io/zone`` label (Nova availability zone)."""
        return self._node(nodename).zone

    # --- inventory of guests ---------------------------------------------------------------

    def _host_vms(self) -> list[JsonObj]:
        selector = f"{LABEL_NODE}={naming.label_value(self.node)}"
        return [v for v in self.client.items(k.VMS, None, selector) if not v["metadata"].get("deletionTimestamp")]  # fmt: skip

    def list_instances(self) -> list[str]:
        return [
            v["metadata"].get("annotations", {}).get(naming.ANNOTATION_INSTANCE_NAME) or v["metadata"]["name"]
            for v in self._host_vms()
        ]  # fmt: skip

    def list_instance_uuids(self) -> list[str]:
        return [v["metadata"]["labels"][naming.LABEL_SERVER_ID] for v in self._host_vms()]

    def list_leftover_uuids(self) -> list[str]:
        """Servers whose Secrets or DataVolumes made on this node outlive their VM."""
        selector = f"{LABEL_NODE}={naming.label_value(self.node)}"
        guests = set(self.list_instance_uuids())
        found: set[str] = set()
        for res in (k.SECRETS, k.DATA_VOLUMES):
            for obj in self.client.items(res, None, selector):
                uuid = obj["metadata"].get("labels", {}).get(naming.LABEL_SERVER_ID)
                if uuid and uuid not in guests and naming.ANNOTATION_VOLUME_ID not in obj["metadata"].get("annotations", {}):  # fmt: skip
                    found.add(uuid)
        return sorted(found)

    def get_info(self, instance: InstanceRef, use_cache: bool = True) -> InstanceInfo:
        self._require_vm(instance)
        state, vmi = self._state(instance)
        uid = vmi["metadata"]["uid"] if vmi else None
        return InstanceInfo(state, internal_id=uid)

    # --- lifecycle -------------------------------------------------------------------------

    def spawn(
        self,
        instance: InstanceSpec,
        *,
        admin_password: str | None = None,
        injected_files: Sequence[InjectedFile] = (),
        power_on: bool = True,
    ) -> None:
        built = self._manifests(instance)
        existing = self._retrying(lambda: self._vm(instance.ref), "reading the VM")
        wanted_hash = built.vm["metadata"]["annotations"][ANNOTATION_SPEC_HASH]
        if existing is not None and existing["metadata"].get("annotations", {}).get(ANNOTATION_SPEC_HASH) != wanted_hash:  # fmt: skip
            # Another definition of this server (an earlier attempt on another node that
            # could not be cleaned up): the build fails rather than take it over; a failed
            # build's clean-up removes its objects before any reschedule (compute build.py).
            raise errors.InstanceExists(instance.uuid)
        if existing is None:
            # A VM of this server still being deleted (foreground) must be gone first.
            self._wait_for(lambda: self.client.get_or_none(k.VMS, self._name(instance.ref), self._ns(instance.ref)) is None,
                           f"waiting for the old VM of {instance.uuid} to go")  # fmt: skip
            self.ensure_boot_claims(instance)
            self._retrying(lambda: self._create(built), f"creating the objects of {instance.uuid}")
        self.tracker.observe(instance.uuid, PowerState.SHUTDOWN, 0, silent=True)
        if power_on:
            self._start(instance.ref)
        else:
            self._wait(instance.ref, {PowerState.SHUTDOWN}, "defining")

    def _create(self, built: vm_manifests.ServerManifests) -> None:
        """Create what is missing (idempotent: a retry after a lost answer is harmless)."""
        self.client.ensure_namespace(built.namespace, {naming.LABEL_MANAGED_BY: naming.MANAGED_BY})  # fmt: skip
        for dv in built.data_volumes:
            self.client.ensure(k.DATA_VOLUMES, dv)
        for secret in built.secrets:
            self.client.ensure(k.SECRETS, secret)
        self.client.ensure(k.VMS, built.vm)

    def _delete_vm(self, ref: InstanceRef) -> None:
        """Delete the VM in the foreground (its VMI and owned DataVolumes first) and wait
        until it is gone."""
        name, ns = self._name(ref), self._ns(ref)
        self._retrying(lambda: self.client.delete(k.VMS, name, ns, "Foreground"), f"deleting the VM of {ref.uuid}")  # fmt: skip
        self._wait_for(lambda: self.client.get_or_none(k.VMS, name, ns) is None, f"deleting instance {ref.uuid}")  # fmt: skip

    def destroy(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
    ) -> None:
        vm = self._retrying(lambda: self._vm(instance), f"reading the VM of {instance.uuid}")
        if vm is not None and self._is_resize_destination(vm):
            self._drop_resize_destination(instance, vm)
            return
        owner = (vm or {}).get("metadata", {}).get("labels", {}).get(LABEL_NODE)
        if vm is not None and owner != naming.label_value(self.node):
            # Another node's now (an evacuation took it over; one VM per server in the
            # cluster): this host's copy of the guest is already gone.
            LOG.info("The VM of %s belongs to node %s now: left alone", instance.uuid, owner)
            return
        if vm is not None:
            self._delete_vm(instance)
            self.release_static_claims(vm)
        self._retrying(lambda: self._state(instance), f"reading the VMI of {instance.uuid}")
        self.cleanup(instance, network=network, destroy_disks=destroy_disks)

    def cleanup(
        self,
        instance: InstanceRef,
        *,
        network: Sequence[NetworkInterface] = (),
        destroy_disks: bool = True,
        destroy_vifs: bool = True,
    ) -> None:
        ns, selector = self._ns(instance), naming.server_selector(instance.uuid)
        kinds = [k.SECRETS, k.NETWORK_POLICIES]
        if destroy_disks:
            kinds.append(k.DATA_VOLUMES)

        def remove() -> None:
            for res in kinds:
                for obj in self.client.items(res, ns, selector):
                    if res is k.DATA_VOLUMES and naming.ANNOTATION_VOLUME_ID in obj["metadata"].get("annotations", {}):  # fmt: skip
                        continue  # a volume outlives the server
                    self.client.delete(res, obj["metadata"]["name"], ns)

        self._retrying(remove, f"removing the objects of {instance.uuid}")

    def reboot(self, instance: InstanceRef, reboot_type: RebootType) -> None:
        if reboot_type == RebootType.SOFT:
            self._guest_state(instance, "reboot", {PowerState.RUNNING})
            self._call(self.virt_api.soft_reboot, instance)
            return
        self._require_vm(instance)
        state, _vmi = self._state(instance)
        if state in RUNNING_LIKE:
            self._call(self.virt_api.reset, instance)
            if state != PowerState.RUNNING:
                self._call(self.virt_api.unpause, instance)
        self._start(instance)

    def power_off(self, instance: InstanceRef, timeout: int = 0, retry_interval: int = 0) -> None:
        """Stop the guest. A VM deleted behind our back is as off as can be: done (as
        libvirt's power off of a vanished domain)."""
        if self._vm(instance) is None:
            LOG.warning("Instance %s has no VirtualMachine: nothing to power off", instance.uuid)
            self._state(instance)
            return
        self._stop(instance, grace_period=timeout)

    def power_on(self, instance: InstanceSpec) -> None:
        """Start the guest; a VM deleted behind our back is defined again from the server
        (as libvirt's power on regenerates the domain), its root disk from the image."""
        if self._vm(instance.ref) is None:
            LOG.warning("Instance %s has no VirtualMachine: defining it again", instance.uuid)
            self.spawn(instance)
            return
        self._start(instance.ref)

    def _call(self, action: Any, ref: InstanceRef) -> None:
        try:
            action(self._ns(ref), self._name(ref))
        except KubeError as exc:
            raise _error(exc) from exc

    def pause(self, instance: InstanceRef) -> None:
        if self._guest_state(instance, "pause", {PowerState.RUNNING, PowerState.PAUSED}) == PowerState.RUNNING:  # fmt: skip
            self._call(self.virt_api.pause, instance)
        self._wait(instance, {PowerState.PAUSED}, "pausing")

    def unpause(self, instance: InstanceRef) -> None:
        if self._guest_state(instance, "unpause", {PowerState.RUNNING, PowerState.PAUSED}) == PowerState.PAUSED:  # fmt: skip
            self._call(self.virt_api.unpause, instance)
        self._wait(instance, {PowerState.RUNNING}, "unpausing")

    def suspend(self, instance: InstanceRef) -> None:
        """No managed save in KubeVirt: pause, marked suspended (memory stays resident)."""
        state = self._guest_state(instance, "suspend", {PowerState.RUNNING, PowerState.PAUSED, PowerState.SUSPENDED})  # fmt: skip
        self._mark_suspended(instance, "true")
        if state == PowerState.RUNNING:
            self._call(self.virt_api.pause, instance)
        self._wait(instance, {PowerState.SUSPENDED}, "suspending")

    def resume(self, instance: InstanceSpec) -> None:
        if self._guest_state(instance.ref, "resume", {PowerState.RUNNING, PowerState.SUSPENDED}) == PowerState.SUSPENDED:  # fmt: skip
            self._call(self.virt_api.unpause, instance.ref)
        self._wait(instance.ref, {PowerState.RUNNING}, "resuming")
        self._mark_suspended(instance.ref, None)

    def _mark_suspended(self, ref: InstanceRef, value: str | None) -> None:
        patch = {"metadata": {"annotations": {ANNOTATION_SUSPENDED: value}}}
        with contextlib.suppress(k.NotFoundError):
            self.client.patch(k.VMIS, self._name(ref), patch, self._ns(ref))


def _error(exc: KubeError) -> errors.DriverError:
    return driver_error(exc)


def from_conf(conf: Any, virt_api: VirtApi | None = None) -> KubevirtDriver:
    """The driver configured by ``[kubevirt]`` (kubeconfig, namespace scheme...)."""
    client = KubeClient(KubeConfig.load(conf.kubevirt.kubeconfig, conf.kubevirt.kubeconfig_context))
    return KubevirtDriver(
        client, settings_from_conf(conf), virt_api or HttpVirtApi(client), owns_client=True
    )


__all__ = ["ANNOTATION_RESIZE", "KubevirtDriver", "from_conf"]
