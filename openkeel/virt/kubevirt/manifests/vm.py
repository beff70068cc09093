"""The VirtualMachine of a server, with the Secrets and DataVolumes it needs.

Called by the KubeVirt driver (spawn, rebuild, resize): ``build_server`` returns everything to
create, in order (standalone DataVolumes and Secrets first, then the VM). Pure: equal inputs
give equal manifests, so a retried spawn can compare what exists with what it wants.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from openkeel.virt.kubevirt.manifests import cloudinit, disks, instancetype, naming, networks
from openkeel.virt.kubevirt.manifests.extra_specs import DomainSettings
from openkeel.virt.kubevirt.manifests.inputs import GuestExtras
from openkeel.virt.kubevirt.manifests.resolution import resolve
from openkeel.virt.kubevirt.manifests.settings import JsonObj, KubevirtSettings
from openkeel.virt.model import InstanceSpec

API_VERSION = "kubevirt.io/v1"
RUN_STRATEGY = "Manual"  # Nova power semantics: nothing restarts a guest but os-start


@dataclass(frozen=True)
class ServerManifests:
    namespace: str
    vm: JsonObj
    secrets: tuple[JsonObj, ...]
    data_volumes: tuple[JsonObj, ...]
    domain_settings: DomainSettings

    def objects(self) -> list[JsonObj]:
        """Every object in creation order."""
        return [*self.data_volumes, *self.secrets, self.vm]


def merge(base: JsonObj, extra: JsonObj) -> JsonObj:
    """Deep-merge ``extra`` into a copy of ``base`` (dicts merge, other values replace)."""
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _annotations(spec: InstanceSpec) -> dict[str, str]:
    annotations = {
        naming.ANNOTATION_DISPLAY_NAME: spec.display_name,
        naming.ANNOTATION_INSTANCE_NAME: spec.ref.name,
        naming.ANNOTATION_PROJECT_ID: spec.ref.project_id,
        naming.ANNOTATION_USER_ID: spec.user_id,
        naming.ANNOTATION_FLAVOR_ID: spec.flavor.flavor_id,
        naming.ANNOTATION_FLAVOR_NAME: spec.flavor.name,
        naming.ANNOTATION_METADATA: json.dumps(dict(spec.metadata), sort_keys=True),
    }
    if spec.image is not None:
        annotations[naming.ANNOTATION_IMAGE_ID] = spec.image.image_id
    return annotations


def _domain(spec: InstanceSpec, resolved: DomainSettings, settings: KubevirtSettings) -> JsonObj:
    base: JsonObj = {"firmware": {"uuid": spec.uuid}, "devices": {}}
    if settings.use_instancetypes:
        return merge(base, instancetype.split_domain(resolved, spec.flavor, settings))
    base["memory"] = {"guest": f"{spec.flavor.memory_mb}Mi"}
    return merge(base, resolved.domain)


def _hostname(spec: InstanceSpec) -> str:
    return naming.dns_label(spec.hostname.split(".")[0] or spec.uuid)


def build_server(
    spec: InstanceSpec,
    settings: KubevirtSettings,
    extras: GuestExtras | None = None,
    node_name: str | None = None,
) -> ServerManifests:
    """The VM (runStrategy Manual, firmware UUID = server UUID) and its dependents."""
    extras = extras or GuestExtras()
    namespace = naming.namespace_for(spec.ref.project_id, settings.namespace_scheme)
    labels = naming.server_labels(spec.uuid, spec.ref.project_id, spec.flavor.flavor_id)
    resolved = resolve(spec.flavor, spec.image, settings)
    storage = disks.build_storage(spec, resolved, settings, namespace, labels)
    nics = networks.build_nics(spec.network, resolved.vif_model, settings, namespace)
    config_drive = spec.config_drive or resolved.config_drive_forced
    guest = cloudinit.build_metadata(
        spec, extras, namespace, labels, config_drive, nics.cluster_addressed
    )
    domain = _domain(spec, resolved, settings)
    devices = domain["devices"]
    devices["disks"] = [*storage.disks, guest.disk]
    devices["interfaces"] = nics.interfaces
    if not nics.interfaces:
        devices["autoattachPodInterface"] = False
    template_spec: JsonObj = {
        "domain": domain,
        "hostname": _hostname(spec),
        "networks": nics.networks,
        "volumes": [*storage.volumes, guest.volume],
    }
    if guest.access_credentials:
        template_spec["accessCredentials"] = guest.access_credentials
    if node_name is not None:
        template_spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
    template_spec = merge(template_spec, resolved.template)
    vm_spec: JsonObj = {"runStrategy": RUN_STRATEGY}
    if settings.use_instancetypes:
        vm_spec["instancetype"] = instancetype.instancetype_ref(spec.flavor)
    if storage.templates:
        vm_spec["dataVolumeTemplates"] = storage.templates
    vm_spec["template"] = {"metadata": {"labels": dict(labels)}, "spec": template_spec}
    metadata = {
        "name": naming.vm_name(spec.uuid),
        "namespace": namespace,
        "labels": dict(labels),
        "annotations": _annotations(spec),
    }
    vm = {
        "apiVersion": API_VERSION,
        "kind": "VirtualMachine",
        "metadata": metadata,
        "spec": vm_spec,
    }
    return ServerManifests(
        namespace=namespace,
        vm=vm,
        secrets=tuple(guest.secrets),
        data_volumes=tuple(storage.data_volumes),
        domain_settings=resolved,
    )
