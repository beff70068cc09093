"""``[kubevirt]`` options: how servers become KubeVirt VirtualMachines.

Read by the KubeVirt virt driver (through ``openkeel.virt.kubevirt.manifests.settings``) and by
the composition roots that build it. Not a Nova group: Nova has no KubeVirt driver.
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.StrOpt(
        "kubeconfig",
        help="Path of the kubeconfig file, or a list of them separated by ':' merged as "
        "kubectl merges KUBECONFIG; empty: the in-cluster service account.",
    ),
    cfg.StrOpt(
        "kubeconfig_context",
        help="Context of the kubeconfig to use; empty: its current-context.",
    ),
    cfg.StrOpt(
        "namespace_scheme",
        default="openkeel-{project_id}",
        help="Namespace of a project's objects; ``{project_id}`` is replaced, the result is "
        "made DNS-1123 safe.",
    ),
    cfg.StrOpt(
        "storage_class",
        help="StorageClass of the DataVolumes created for servers; empty: the cluster default.",
    ),
    cfg.StrOpt(
        "ceph_csi_cluster_id",
        default="",
        help="ceph-csi's clusterID (the key of its config map) of the Ceph cluster a Cinder "
        "RBD back end uses: a Cinder 'rbd' volume becomes a static PersistentVolume of "
        "rbd.csi.ceph.com (decision 0080). Empty: 'rbd' volumes are not supported.",
    ),
    cfg.StrOpt(
        "ceph_csi_node_stage_secret",
        default="",
        help="'<namespace>/<name>' of the Secret (userID, userKey) ceph-csi maps a static RBD "
        "volume with (the PersistentVolume's nodeStageSecretRef).",
    ),
    cfg.StrOpt(
        "ceph_csi_image_features",
        default="layering",
        help="imageFeatures of a static RBD PersistentVolume (ceph-csi requires the "
        "attribute; the image's own features, as Cinder's rbd_* options made them).",
    ),
    cfg.StrOpt(
        "image_source_policy",
        default="datavolume",
        choices=[
            ("datavolume", "root disk cloned by CDI from the image's DataSource (persistent)"),
            ("containerdisk", "root disk is an ephemeral containerDisk (lost on restart)"),
        ],
        help="How an image-backed root disk is provided.",
    ),
    cfg.StrOpt(
        "images_namespace",
        default="openkeel-images",
        help="Namespace holding the imported images (CDI DataVolumes and DataSources).",
    ),
    cfg.StrOpt(
        "containerdisk_registry",
        default="",
        help="Registry prefix of containerDisk images: ``<registry>/<image_id>:latest``.",
    ),
    cfg.DictOpt(
        "containerdisk_images",
        default={},
        help="Explicit image id -> containerDisk image reference mapping (wins over the registry).",
    ),
    cfg.BoolOpt(
        "use_instancetypes",
        default=False,
        help="Refer to a VirtualMachineClusterInstancetype per flavor instead of writing CPU "
        "and memory into each VirtualMachine.",
    ),
    cfg.StrOpt(
        "network_namespace",
        default="",
        help="Namespace of the NetworkAttachmentDefinitions (one per network); empty: the "
        "project namespace.",
    ),
    cfg.DictOpt(
        "network_mappings",
        default={},
        help="Network (id or name) -> where its ports go: 'pod' (the pod network, masquerade; "
        "the pod's IP becomes the port's address), '<namespace>/<nad>' (a Multus "
        "NetworkAttachmentDefinition without IPAM: the port's fixed IPs are configured in the "
        "guest) or 'dhcp:<namespace>/<nad>' (a NAD whose IPAM assigns the address, which the "
        "port then follows). Unmapped networks use '<network_namespace>/net-<network id>'.",
    ),
    cfg.StrOpt(
        "default_hugepage_size",
        default="2Mi",
        choices=["2Mi", "1Gi"],
        help="Page size used for hw:mem_page_size=large.",
    ),
    cfg.DictOpt(
        "pci_alias_resources",
        default={},
        help="Nova PCI alias -> KubeVirt permittedHostDevices resourceName.",
    ),
    cfg.StrOpt(
        "vgpu_resource_name",
        default="",
        help="KubeVirt mediated device resourceName used for resources:VGPU.",
    ),
    cfg.BoolOpt(
        "log_serial_console",
        default=True,
        help="Keep the serial console log (needed for os-getConsoleOutput).",
    ),
    cfg.BoolOpt(
        "snapshot_export",
        default=True,
        help="Export a snapshot's root disk bytes (KubeVirt VirtualMachineExport of the "
        "VirtualMachineSnapshot) and upload them to the image service. Needed with Glance; "
        "false keeps the data only in the cluster (the image's DataSource), which only the "
        "embedded image catalog accepts.",
    ),
    cfg.StrOpt(
        "export_link",
        default="external",
        choices=["external", "internal"],
        help="Which link of a VirtualMachineExport the compute host downloads from: external "
        "(KubeVirt's Ingress/Route) or internal (the export Service, for hosts running in "
        "the cluster). The other one is used when this one is not published.",
    ),
    cfg.StrOpt(
        "export_ttl",
        default="1h",
        help="ttlDuration of a snapshot's VirtualMachineExport: KubeVirt deletes an export "
        "left behind (a compute host that died mid-download) after this long.",
    ),
    cfg.BoolOpt(
        "security_group_policies",
        default=True,
        help="Enforce the security groups of a server's pod-network port as Kubernetes "
        "NetworkPolicies in its namespace (decision 0077; ICMP and other non TCP/UDP/SCTP "
        "rules cannot be expressed and stay denied). False: the compute host writes none and "
        "does not ask for the groups (policies written before stay: delete them with the "
        "label app.kubernetes.io/managed-by=openkeel,nova.openstack.org/security-group-id).",
    ),
    cfg.IntOpt(
        "security_group_refresh_interval",
        default=60,
        help="Seconds between the compute host's refreshes of its servers' NetworkPolicies "
        "(rule changes, groups added or removed, new members of remote groups reach the "
        "cluster then); negative: written at build and on addSecurityGroup/removeSecurityGroup only.",
    ),
    cfg.IntOpt(
        "export_ready_timeout",
        default=600,
        min=0,
        help="Seconds a snapshot waits for its VirtualMachineExport to be Ready (KubeVirt "
        "restores the snapshot's volumes and starts an export server first); then the "
        "snapshot fails, its image is deleted and the server keeps its state. 0: the "
        "driver's own wait.",
    ),
    cfg.StrOpt(
        "node_label_selector",
        default="kubevirt.io/schedulable=true",
        help="Label selector of the Nodes that are compute hosts (one each). Followed while "
        "running: a matching Node that appears becomes a compute host; one deleted or no "
        "longer matching stops its host, whose service then goes down. virt-handler labels "
        "the Nodes that can run guests kubevirt.io/schedulable=true. Empty: every Node.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the ``[kubevirt]`` group on ``conf``."""
    conf.register_opts(OPTS, group="kubevirt")
