"""Guest metadata: config drive or cloud-init NoCloud, user data and key pair Secrets.

Called by ``vm.build_server``. Config drive (``config_drive=true`` or image
``img_config_drive=mandatory``) uses KubeVirt's ``cloudInitConfigDrive``, which writes the
OpenStack layout (``openstack/latest/meta_data.json`` with ``uuid`` = firmware UUID,
``user_data``, ``network_data.json``: the compute role's, the metadata service's document,
when it built the drive's files); otherwise ``cloudInitNoCloud`` with netplan v2. The key
pair reaches ``public_keys`` through ``accessCredentials``. Nova's full meta_data.json and
vendor data are kept in the Secret too (keys KubeVirt ignores) for a metadata proxy.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass

import yaml

from openkeel.virt.kubevirt.manifests import naming, networks
from openkeel.virt.kubevirt.manifests.inputs import GuestExtras, KeyPair
from openkeel.virt.kubevirt.manifests.settings import JsonObj
from openkeel.virt.model import InstanceSpec

VOLUME_NAME = "cloudinitdisk"
DRIVE_NETWORK_DATA = "openstack/latest/network_data.json"


@dataclass(frozen=True)
class GuestMetadata:
    volume: JsonObj
    disk: JsonObj
    secrets: list[JsonObj]
    access_credentials: list[JsonObj]


def key_pair(spec: InstanceSpec, extras: GuestExtras) -> KeyPair | None:
    """The server's key pair; a bare ``key_data`` (no name known) is named ``default``."""
    if extras.key_pair is not None:
        return extras.key_pair
    return KeyPair("default", spec.key_data) if spec.key_data else None


def meta_data(spec: InstanceSpec, extras: GuestExtras) -> JsonObj:
    """Nova's meta_data.json (without ``random_seed``: manifests are deterministic)."""
    data: JsonObj = {"uuid": spec.uuid}
    if spec.metadata:
        data["meta"] = dict(spec.metadata)
    key = key_pair(spec, extras)
    if key is not None:
        data["public_keys"] = {key.name: key.public_key}
        data["keys"] = [{"name": key.name, "type": key.type, "data": key.public_key}]
    data["hostname"] = spec.hostname
    data["name"] = spec.display_name
    data["launch_index"] = extras.launch_index
    data["availability_zone"] = spec.availability_zone
    data["project_id"] = spec.ref.project_id
    data["devices"] = []
    if extras.admin_password is not None:
        data["admin_pass"] = extras.admin_password
    return data


def vendor_data(extras: GuestExtras) -> JsonObj:
    """vendor_data2.json-style document (static vendor data given by the operator)."""
    return {"static": dict(extras.vendor_data)} if extras.vendor_data else {}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _secret(name: str, namespace: str, labels: dict[str, str], data: dict[str, str]) -> JsonObj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "type": "Opaque",
        "data": data,
    }


def _network_text(
    spec: InstanceSpec, extras: GuestExtras, config_drive: bool, dhcp_ports: frozenset[str]
) -> str | None:
    subnets = dict(extras.subnets)
    built = dict(spec.config_drive_files).get(DRIVE_NETWORK_DATA)
    if config_drive and built is not None:
        # The compute role's config drive files: the metadata service's network_data.json.
        return built.decode() if json.loads(built).get("links") else None
    if config_drive:
        document = networks.network_data(spec.network, subnets, dhcp_ports)
        return json.dumps(document, sort_keys=True) if document["links"] else None
    plan = networks.netplan_v2(spec.network, subnets, dhcp_ports)
    return yaml.safe_dump(plan, sort_keys=True) if plan["ethernets"] else None


def _key_credentials(
    spec: InstanceSpec, extras: GuestExtras, namespace: str, labels: dict[str, str], drive: bool
) -> tuple[list[JsonObj], list[JsonObj]]:
    key = key_pair(spec, extras)
    if key is None:
        return [], []
    name = naming.ssh_keys_secret_name(spec.uuid)
    data_key = re.sub(r"[^-._a-zA-Z0-9]", "-", key.name) or "key"
    secret = _secret(name, namespace, labels, {data_key: _b64(key.public_key)})
    method: JsonObj = {"configDrive": {}} if drive else {"noCloud": {}}
    credential = {
        "sshPublicKey": {"source": {"secret": {"secretName": name}}, "propagationMethod": method}
    }
    return [secret], [credential]


def build_metadata(
    spec: InstanceSpec,
    extras: GuestExtras,
    namespace: str,
    labels: dict[str, str],
    config_drive: bool,
    dhcp_ports: frozenset[str] = frozenset(),
) -> GuestMetadata:
    """The cloud-init volume and disk, its Secrets and the key pair's access credential.
    ``dhcp_ports``: ports whose address the cluster assigns (configured for DHCP)."""
    name = naming.user_data_secret_name(spec.uuid)
    data = {
        "userdata": spec.user_data or "",
        "meta_data.json": _b64(json.dumps(meta_data(spec, extras), sort_keys=True)),
    }
    source: JsonObj = {"secretRef": {"name": name}}
    network_text = _network_text(spec, extras, config_drive, dhcp_ports)
    if network_text is not None:
        data["networkdata"] = _b64(network_text)
        source["networkDataSecretRef"] = {"name": name}
    vendor = vendor_data(extras)
    if vendor:
        data["vendor_data.json"] = _b64(json.dumps(vendor, sort_keys=True))
    kind = "cloudInitConfigDrive" if config_drive else "cloudInitNoCloud"
    secrets = [_secret(name, namespace, labels, data)]
    key_secrets, credentials = _key_credentials(spec, extras, namespace, labels, config_drive)
    password_secrets, password_credentials = _password_credentials(spec, namespace, labels)
    return GuestMetadata(
        volume={"name": VOLUME_NAME, kind: source},
        disk={"name": VOLUME_NAME, "disk": {"bus": "virtio"}},
        secrets=secrets + key_secrets + password_secrets,
        access_credentials=credentials + password_credentials,
    )


def guest_agent_enabled(spec: InstanceSpec) -> bool:
    """The image says the guest runs the QEMU guest agent (Nova's ``hw_qemu_guest_agent``)."""
    properties = spec.image.properties if spec.image is not None else {}
    return str(properties.get("hw_qemu_guest_agent", "")).lower() in {"yes", "true", "1", "on"}


def _password_credentials(
    spec: InstanceSpec, namespace: str, labels: dict[str, str]
) -> tuple[list[JsonObj], list[JsonObj]]:
    """With a guest agent: an (empty) password Secret the agent applies while the guest runs,
    so that changePassword is a Secret update (KubeVirt propagates it live)."""
    if not guest_agent_enabled(spec):
        return [], []
    name = naming.password_secret_name(spec.uuid)
    credential = {
        "userPassword": {
            "source": {"secret": {"secretName": name}},
            "propagationMethod": {"qemuGuestAgent": {}},
        }
    }
    return [_secret(name, namespace, labels, {})], [credential]
