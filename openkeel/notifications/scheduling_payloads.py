"""Payloads of the scheduler's and the conductor's versioned notifications (Nova 34.0.0):
``scheduler.select_destinations.start/end`` (RequestSpecPayload 1.1) and
``compute_task.<method>.error`` (ComputeTaskPayload 1.0), built from the request spec primitive
the conductor sends the scheduler, with its flavor (FlavorPayload), image (ImageMetaPayload 1.0
with the image's properties in ImageMetaPropsPayload 1.20, only the ones set, as Nova's) and
PCI requests (InstancePCIRequestsPayload 1.0; OpenKeel has none).
Sent by openkeel.scheduler.endpoint and openkeel.conductor.tasks.recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openkeel.notifications.envelope import ovo, unwrap
from openkeel.notifications.versioned import exception_payload

# Image fields ImageMetaPayload carries (the rest of an image document is a property).
_IMAGE_FIELDS = (
    "id", "name", "status", "visibility", "protected", "checksum", "owner", "size",
    "virtual_size", "container_format", "disk_format", "created_at", "updated_at", "tags",
    "direct_url", "min_ram", "min_disk",
)  # fmt: skip


# Nova's ImageMetaProps fields (hw_*, img_*, os_*, traits_required); other image properties
# (the user's own) are not part of the payload.
_IMAGE_PROPERTY_PREFIXES = ("hw_", "img_", "os_", "traits_required")


def _flavor(data: Mapping[str, Any]) -> dict[str, Any]:
    """FlavorPayload 1.4 of the spec's flavor primitive (missing fields: Nova's defaults)."""
    return ovo(
        "FlavorPayload",
        "1.4",
        {
            "flavorid": str(data.get("flavorid") or ""),
            "name": data.get("name"),
            "root_gb": int(data.get("root_gb") or 0),
            "vcpus": int(data.get("vcpus") or 0),
            "ephemeral_gb": int(data.get("ephemeral_gb") or 0),
            "memory_mb": int(data.get("memory_mb") or 0),
            "disabled": bool(data.get("disabled", False)),
            "rxtx_factor": float(data.get("rxtx_factor") or 1.0),
            "extra_specs": {str(k): str(v) for k, v in (data.get("extra_specs") or {}).items()},
            "projects": None,
            "swap": int(data.get("swap") or 0),
            "is_public": bool(data.get("is_public", True)),
            "vcpu_weight": int(data.get("vcpu_weight") or 0),
            "description": data.get("description"),
        },
    )


def _image(data: Mapping[str, Any]) -> dict[str, Any]:
    """ImageMetaPayload 1.0; properties: the image's own ones, as ImageMetaPropsPayload."""
    fields = {name: data.get(name) for name in _IMAGE_FIELDS}
    for name in ("min_ram", "min_disk"):
        fields[name] = int(fields[name] or 0)
    fields["protected"] = bool(fields["protected"])
    fields["tags"] = list(fields["tags"] or [])
    properties = dict(data.get("properties") or {})
    properties.update(
        {k: v for k, v in data.items() if k not in _IMAGE_FIELDS and k != "properties"}
    )
    known = {k: v for k, v in properties.items() if k.startswith(_IMAGE_PROPERTY_PREFIXES)}
    fields["properties"] = ovo("ImageMetaPropsPayload", "1.20", known)
    return ovo("ImageMetaPayload", "1.0", fields)


def request_spec_payload(spec: Mapping[str, Any]) -> dict[str, Any]:
    """RequestSpecPayload 1.1 of a request spec primitive (envelopes or not)."""
    data = unwrap(spec)
    uuid = data.get("instance_uuid")
    hints = data.get("scheduler_hints") or {}
    return ovo(
        "RequestSpecPayload",
        "1.1",
        {
            "availability_zone": data.get("availability_zone"),
            "flavor": _flavor(data.get("flavor") or {}),
            "ignore_hosts": list(data["ignore_hosts"]) if data.get("ignore_hosts") else None,
            "image": _image(data.get("image") or {}),
            "instance_uuid": uuid,
            "num_instances": int(data.get("num_instances") or 1),
            "numa_topology": None,
            "pci_requests": ovo(
                "InstancePCIRequestsPayload", "1.0", {"instance_uuid": uuid, "requests": []}
            ),
            "project_id": data.get("project_id"),
            "scheduler_hints": {str(k): v for k, v in hints.items()},
            "security_groups": _group_names(data.get("security_groups")),
            "force_hosts": _first(data.get("force_hosts")),
            "force_nodes": _first(data.get("force_nodes")),
            "instance_group": None,
            "requested_destination": None,
            "retry": None,
            "user_id": data.get("user_id"),
        },
    )


def _first(value: Any) -> str | None:
    """Nova's payload holds one forced host/node (the first), or null."""
    if isinstance(value, list | tuple):
        return str(value[0]) if value else None
    return str(value) if value else None


def _group_names(value: Any) -> list[str]:
    names = []
    for group in value or ():
        names.append(str(group.get("name")) if isinstance(group, Mapping) else str(group))
    return names


def compute_task_payload(
    instance_uuid: str, spec: Mapping[str, Any], state: str | None, exc: BaseException
) -> dict[str, Any]:
    """ComputeTaskPayload 1.0: the failed task's instance, request spec, vm_state and reason."""
    return ovo(
        "ComputeTaskPayload",
        "1.0",
        {
            "instance_uuid": instance_uuid,
            "reason": exception_payload(exc),
            "request_spec": request_spec_payload(spec),
            "state": state,
        },
    )


def legacy_request_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The legacy (unversioned) form Nova sends: ``to_legacy_request_spec_dict``'s keys."""
    data = unwrap(spec)
    return {
        "image": data.get("image") or {},
        "instance_type": data.get("flavor") or {},
        "instance_properties": {
            "uuid": data.get("instance_uuid"),
            "project_id": data.get("project_id"),
            "user_id": data.get("user_id"),
            "availability_zone": data.get("availability_zone"),
        },
        "num_instances": int(data.get("num_instances") or 1),
    }


__all__ = [
    "compute_task_payload",
    "legacy_request_spec",
    "request_spec_payload",
]
