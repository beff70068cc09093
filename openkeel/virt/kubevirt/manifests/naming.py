"""Names, labels and annotations of the Kubernetes objects that belong to a server.

One place for the conventions the KubeVirt driver relies on to find its objects again: the
namespace of a project, the VirtualMachine name of a server, the names of its Secrets and
DataVolumes, and the labels selecting them. Every name is DNS-1123 safe; raw values that had to
be altered keep their original text in an annotation.
"""

from __future__ import annotations

import hashlib
import re

DOMAIN = "nova.openstack.org"
LABEL_SERVER_ID = f"{DOMAIN}/server-id"
LABEL_PROJECT_ID = f"{DOMAIN}/project-id"
LABEL_FLAVOR_ID = f"{DOMAIN}/flavor-id"
LABEL_IMAGE_ID = f"{DOMAIN}/image-id"  # a VM snapshot's image (images.manage_image_cache)
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "openkeel"

ANNOTATION_DISPLAY_NAME = f"{DOMAIN}/display-name"
ANNOTATION_METADATA = f"{DOMAIN}/metadata"
ANNOTATION_PROJECT_ID = f"{DOMAIN}/project-id"
ANNOTATION_USER_ID = f"{DOMAIN}/user-id"
ANNOTATION_FLAVOR_ID = f"{DOMAIN}/flavor-id"
ANNOTATION_FLAVOR_NAME = f"{DOMAIN}/flavor-name"
ANNOTATION_IMAGE_ID = f"{DOMAIN}/image-id"
ANNOTATION_INSTANCE_NAME = f"{DOMAIN}/instance-name"
ANNOTATION_VOLUME_ID = f"{DOMAIN}/volume-id"

_LABEL_MAX = 63
_NAME_MAX = 253
_HASH_LEN = 8


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()[:_HASH_LEN]


def _shorten(clean: str, raw: str, limit: int, changed: bool) -> str:
    """Append a hash of ``raw`` when ``clean`` lost information or is too long."""
    if not changed and clean and len(clean) <= limit:
        return clean
    head = clean[: limit - _HASH_LEN - 1].strip("-.") or "x"
    return f"{head}-{_digest(raw)}"


def dns_label(raw: str) -> str:
    """A DNS-1123 label (``[a-z0-9]([-a-z0-9]*[a-z0-9])?``, <= 63) unique per ``raw``."""
    clean = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", raw.lower())).strip("-")
    return _shorten(clean, raw, _LABEL_MAX, clean != raw)


def dns_subdomain(raw: str) -> str:
    """A DNS-1123 subdomain (labels joined by dots, <= 253) unique per ``raw``."""
    lowered = re.sub(r"[^a-z0-9.-]", "-", raw.lower())
    parts = [p.strip("-") for p in lowered.split(".")]
    clean = ".".join(p for p in parts if p)
    return _shorten(clean, raw, _NAME_MAX, clean != raw)


def label_value(raw: str) -> str:
    """A valid label value (``[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?``, <= 63)."""
    clean = re.sub(r"[^A-Za-z0-9_.-]", "-", raw).strip("-_.")
    return _shorten(clean, raw, _LABEL_MAX, clean != raw)


def namespace_for(project_id: str, scheme: str) -> str:
    """The namespace of a project's objects, from ``[kubevirt] namespace_scheme``."""
    return dns_label(scheme.format(project_id=project_id))


def vm_name(server_uuid: str) -> str:
    """VirtualMachine (and VMI) name of a server: stable for its whole life."""
    return dns_label(f"instance-{server_uuid}")


def user_data_secret_name(server_uuid: str) -> str:
    """Secret with the cloud-init ``userdata``/``networkdata`` keys."""
    return f"{vm_name(server_uuid)}-cloudinit"


def ssh_keys_secret_name(server_uuid: str) -> str:
    """Secret with the key pair's public key (accessCredentials source)."""
    return f"{vm_name(server_uuid)}-ssh"


def password_secret_name(server_uuid: str) -> str:
    """Secret of user passwords the guest agent applies (userPassword accessCredentials)."""
    return f"{vm_name(server_uuid)}-password"


def root_data_volume_name(server_uuid: str) -> str:
    """DataVolume (template) of an image-backed local root disk."""
    return f"{vm_name(server_uuid)}-root"


def local_data_volume_name(server_uuid: str, disk: str) -> str:
    """DataVolume template of another disk owned by the server (deleted with it)."""
    return f"{vm_name(server_uuid)}-{disk}"


def volume_claim_name(volume_id: str) -> str:
    """PVC / standalone DataVolume backing a Cinder-like volume (survives the server)."""
    return dns_label(f"volume-{volume_id}")


def image_data_source_name(image_id: str) -> str:
    """CDI DataSource (and import DataVolume) of a Glance image in the images namespace."""
    return dns_label(f"image-{image_id}")


def snapshot_name(snapshot_id: str) -> str:
    """VolumeSnapshot of a volume snapshot."""
    return dns_label(f"snapshot-{snapshot_id}")


def network_attachment_name(network_id: str) -> str:
    """Multus NetworkAttachmentDefinition of a network."""
    return dns_label(f"net-{network_id}")


def interface_name(port_id: str) -> str:
    """Interface/network name inside the VM for a port (stable across NIC hot-plug)."""
    return dns_label(f"port-{port_id}")


def instancetype_name(flavor_id: str) -> str:
    """VirtualMachineClusterInstancetype of a flavor."""
    return dns_label(f"flavor-{flavor_id}")


def server_labels(server_uuid: str, project_id: str, flavor_id: str) -> dict[str, str]:
    """Labels on every object of a server (VM, VMI template, Secrets, DataVolumes)."""
    return {
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_SERVER_ID: server_uuid,
        LABEL_PROJECT_ID: label_value(project_id),
        LABEL_FLAVOR_ID: label_value(flavor_id),
    }


def server_selector(server_uuid: str) -> str:
    """Label selector matching every object of a server."""
    return f"{LABEL_SERVER_ID}={server_uuid}"
