"""The ``[kubevirt]`` options as a frozen value, so manifest builders stay pure and testable.

The driver builds one :class:`KubevirtSettings` from its ConfigOpts at start-up
(:func:`settings_from_conf`) and passes it to every builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JsonObj = dict[str, Any]

IMAGE_SOURCE_DATAVOLUME = "datavolume"
IMAGE_SOURCE_CONTAINERDISK = "containerdisk"


@dataclass(frozen=True)
class KubevirtSettings:
    """Operator choices that shape the manifests (see openkeel.conf.kubevirt for meanings)."""

    namespace_scheme: str = "openkeel-{project_id}"
    storage_class: str | None = None
    image_source_policy: str = IMAGE_SOURCE_DATAVOLUME
    images_namespace: str = "openkeel-images"
    containerdisk_registry: str = ""
    containerdisk_images: Mapping[str, str] = field(default_factory=dict)
    use_instancetypes: bool = False
    network_namespace: str | None = None
    # network id or name -> "pod" | "<ns>/<nad>" | "dhcp:<ns>/<nad>" (manifests.networks)
    network_mappings: Mapping[str, str] = field(default_factory=dict)
    default_hugepage_size: str = "2Mi"
    pci_alias_resources: Mapping[str, str] = field(default_factory=dict)
    vgpu_resource_name: str | None = None
    log_serial_console: bool = True
    # Snapshot bytes through a VirtualMachineExport (decision 0071).
    snapshot_export: bool = True
    export_link: str = "external"  # or "internal": which of the export's links to download from
    export_ttl: str = "1h"
    export_ready_timeout: int = 600  # seconds; 0: the driver's own wait
    # Security groups as NetworkPolicies (decision 0077).
    security_group_policies: bool = True
    security_group_refresh_interval: int = 60  # seconds; negative: only at build
    # A real Cinder's RBD volumes as static ceph-csi PersistentVolumes (decision 0080).
    ceph_csi_cluster_id: str = ""
    ceph_csi_node_stage_secret: str = ""  # "<namespace>/<name>"
    ceph_csi_image_features: str = "layering"


def settings_from_conf(conf: Any) -> KubevirtSettings:
    """Read the ``[kubevirt]`` group of an oslo.config ConfigOpts."""
    group = conf.kubevirt
    return KubevirtSettings(
        namespace_scheme=group.namespace_scheme,
        storage_class=group.storage_class or None,
        image_source_policy=group.image_source_policy,
        images_namespace=group.images_namespace,
        containerdisk_registry=group.containerdisk_registry,
        containerdisk_images=dict(group.containerdisk_images),
        use_instancetypes=group.use_instancetypes,
        network_namespace=group.network_namespace or None,
        network_mappings=dict(group.network_mappings),
        default_hugepage_size=group.default_hugepage_size,
        pci_alias_resources=dict(group.pci_alias_resources),
        vgpu_resource_name=group.vgpu_resource_name or None,
        log_serial_console=group.log_serial_console,
        security_group_policies=group.security_group_policies,
        security_group_refresh_interval=group.security_group_refresh_interval,
        snapshot_export=group.snapshot_export,
        export_link=group.export_link,
        export_ttl=group.export_ttl,
        export_ready_timeout=group.export_ready_timeout,
        ceph_csi_cluster_id=group.ceph_csi_cluster_id,
        ceph_csi_node_stage_secret=group.ceph_csi_node_stage_secret,
        ceph_csi_image_features=group.ceph_csi_image_features,
    )
