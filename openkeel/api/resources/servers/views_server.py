"""The detailed server body (``GET /servers/{id}``, ``/servers/detail`` items, ``PUT`` answer)
per microversion, and the 2.69 minimal body of a server whose cell is down.

``ShowOptions`` carries what the handler decided from the microversion and policy so the view
itself never checks policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import views_parts as parts
from openkeel.api.resources.servers.image_properties import STANDARD_IMAGE_PROPERTIES
from openkeel.api.usecases.servers.records import ServerRecord
from openkeel.domain.states import status_from_state

_PROGRESS_STATUSES = frozenset(
    {"ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING"}
)
_FAULT_STATUSES = frozenset({"ERROR", "DELETED"})


@dataclass(frozen=True)
class ShowOptions:
    """Which optional parts to render (Nova's ``show`` keyword flags).

    ``full`` is False only for the PUT answer before 2.75 (no AZ, config drive, key name,
    usage, security groups, extended status and volumes; addresses not extended).
    """

    is_admin: bool
    extra_specs: bool = False
    extended_attrs: bool = False
    full: bool = True
    security_groups: bool = True
    server_groups: bool = False
    user_data: bool = True


def status(record: ServerRecord) -> str:
    """The API status of the server."""
    instance = record.instance
    if instance.deleted:
        return "DELETED"
    return status_from_state(instance.vm_state, instance.task_state)


def server(req: ApiRequest, record: ServerRecord, opts: ShowOptions) -> dict[str, Any]:
    """One server's detailed body (without the ``{"server": ...}`` envelope)."""
    if record.down:
        return down_cell(req, record, opts)
    inst = record.instance
    body: dict[str, Any] = {
        "accessIPv4": inst.access_ip_v4 or "",
        "accessIPv6": inst.access_ip_v6 or "",
        "addresses": parts.addresses(inst, opts.full),
        "created": parts.isotime(inst.created_at),
        "flavor": parts.flavor(req, inst.flavor, req.at_least("2.47"), opts.extra_specs),
        "hostId": parts.host_id(inst.host, inst.project_id),
        "id": inst.uuid,
        "image": _image(req, record),
        "links": parts.links(req, inst.uuid),
        "metadata": dict(inst.metadata),
        "name": inst.display_name,
        "status": status(record),
        "tenant_id": inst.project_id or "",
        "user_id": inst.user_id or "",
        "updated": parts.isotime(inst.updated_at),
        "OS-DCF:diskConfig": "AUTO" if inst.auto_disk_config else "MANUAL",
    }
    if body["status"] in _FAULT_STATUSES:
        fault = parts.fault(inst.fault, opts.is_admin)
        if fault:
            body["fault"] = fault
    if body["status"] in _PROGRESS_STATUSES:
        body["progress"] = inst.progress or 0
    if opts.full:
        _add_full(req, record, opts, body)
    if opts.extended_attrs:
        _add_extended_attrs(req, record, opts, body)
    _add_versioned(req, record, opts, body)
    return body


def _image(req: ApiRequest, record: ServerRecord) -> dict[str, Any] | str:
    props = STANDARD_IMAGE_PROPERTIES if req.at_least("2.98") else None
    return parts.image(req, record.instance, props)


def _add_full(
    req: ApiRequest, record: ServerRecord, opts: ShowOptions, body: dict[str, Any]
) -> None:
    inst = record.instance
    body["OS-EXT-AZ:availability_zone"] = record.availability_zone or ""
    body["config_drive"] = inst.config_drive
    body["key_name"] = inst.key_name
    body["OS-SRV-USG:launched_at"] = _usage_time(inst.launched_at)
    body["OS-SRV-USG:terminated_at"] = _usage_time(inst.terminated_at)
    if opts.security_groups and inst.security_groups:
        body["security_groups"] = [{"name": name} for name in inst.security_groups]
    body["OS-EXT-STS:task_state"] = inst.task_state
    body["OS-EXT-STS:vm_state"] = inst.vm_state
    body["OS-EXT-STS:power_state"] = inst.power_state
    body["os-extended-volumes:volumes_attached"] = parts.volumes(
        record.volumes, req.at_least("2.3")
    )


def _usage_time(value: Any) -> str | None:
    # Nova serializes these naive datetimes with microseconds: "2013-09-23T13:53:12.774549".
    if value is None:
        return None
    if value.year < 1000 or value.tzinfo is not None:
        return str(value.strftime("%Y-%m-%dT%H:%M:%S.%f"))
    return str(value.isoformat(timespec="microseconds"))  # the same text, faster


def _add_extended_attrs(
    req: ApiRequest, record: ServerRecord, opts: ShowOptions, body: dict[str, Any]
) -> None:
    inst = record.instance
    body["OS-EXT-SRV-ATTR:host"] = inst.host
    body["OS-EXT-SRV-ATTR:instance_name"] = instance_name(inst.id)
    body["OS-EXT-SRV-ATTR:hypervisor_hostname"] = inst.node
    if req.at_least("2.3"):
        body["OS-EXT-SRV-ATTR:hostname"] = inst.hostname
        body["OS-EXT-SRV-ATTR:kernel_id"] = inst.kernel_id
        body["OS-EXT-SRV-ATTR:launch_index"] = inst.launch_index
        body["OS-EXT-SRV-ATTR:ramdisk_id"] = inst.ramdisk_id
        body["OS-EXT-SRV-ATTR:reservation_id"] = inst.reservation_id
        body["OS-EXT-SRV-ATTR:root_device_name"] = inst.root_device_name
        if opts.user_data:
            body["OS-EXT-SRV-ATTR:user_data"] = inst.user_data


def instance_name(row_id: int | None) -> str:
    """Nova's ``instance_name_template`` default ``instance-%08x`` ("" before the row exists)."""
    return f"instance-{row_id:08x}" if row_id is not None else ""


def _add_versioned(
    req: ApiRequest, record: ServerRecord, opts: ShowOptions, body: dict[str, Any]
) -> None:
    inst = record.instance
    if req.at_least("2.9"):
        body["locked"] = bool(inst.locked_by)
    if req.at_least("2.16") and record.host_status is not None:
        body["host_status"] = record.host_status
    if req.at_least("2.19"):
        body["description"] = inst.display_description
    if req.at_least("2.26"):
        body["tags"] = list(inst.tags)
    if req.at_least("2.63"):
        body["trusted_image_certificates"] = (
            list(inst.trusted_certs) if inst.trusted_certs else None
        )
    if opts.server_groups:
        body["server_groups"] = list(record.server_groups)
    if req.at_least("2.73"):
        body["locked_reason"] = inst.system_metadata.get("locked_reason")
    if req.at_least("2.90") and not opts.extended_attrs:
        body["OS-EXT-SRV-ATTR:hostname"] = inst.hostname
    if opts.full and req.at_least("2.96"):
        body["pinned_availability_zone"] = record.pinned_az
    if req.at_least("2.100"):
        body["scheduler_hints"] = dict(record.scheduler_hints or {})


def down_cell(req: ApiRequest, record: ServerRecord, opts: ShowOptions) -> dict[str, Any]:
    """What the API DB alone can tell about a server in an unreachable cell (2.69)."""
    inst = record.instance
    body: dict[str, Any] = {
        "id": inst.uuid,
        "status": "UNKNOWN",
        "tenant_id": inst.project_id,
        "created": parts.isotime(inst.created_at),
        "links": parts.links(req, inst.uuid),
    }
    if inst.flavor.flavorid:  # known from the request spec (show), not in lists
        body["image"] = _image(req, record)
        body["flavor"] = parts.flavor(req, inst.flavor, req.at_least("2.47"), opts.extra_specs)
        body["OS-EXT-AZ:availability_zone"] = inst.availability_zone or "UNKNOWN"
        body["OS-EXT-STS:power_state"] = inst.power_state
        body["user_id"] = inst.user_id or "UNKNOWN"
        if opts.server_groups:
            body["server_groups"] = list(record.server_groups)
    return body
