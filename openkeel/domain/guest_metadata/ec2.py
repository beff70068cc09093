"""EC2-style metadata (``/<version>/meta-data/...``, ``user-data``) for one server."""

from __future__ import annotations

import base64
from typing import Any

from openkeel.domain.guest_metadata import network
from openkeel.domain.guest_metadata.record import GuestRecord
from openkeel.domain.guest_metadata.versions import EC2_VERSIONS, at_least

Tree = dict[str, Any]


def _device_mapping(record: GuestRecord) -> dict[str, str]:
    root = record.root_device_name or "/dev/vda"
    return {"ami": root.removeprefix("/dev/"), "root": root}


def _image_id(prefix: str, ref: str | None) -> str:
    # OpenKeel keeps no EC2 id table: the id is the first 8 hex digits of the image uuid.
    return f"{prefix}-{(ref or '').replace('-', '')[:8].rjust(8, '0')}"


def ec2_data(record: GuestRecord, version: str, address: str | None) -> Tree:
    """``{"meta-data": {...}, "user-data": bytes}`` as Nova serves version ``version``."""
    fixed = network.fixed_ipv4s(record.network_info)
    floating = network.floating_ips(record.network_info)
    meta: Tree = {
        "ami-id": _image_id("ami", record.image_ref),
        "ami-launch-index": record.launch_index,
        "ami-manifest-path": "FIXME",
        "instance-id": f"i-{record.ec2_id:08x}",
        "hostname": record.hostname,
        "local-ipv4": fixed[0] if fixed else (address or ""),
        "reservation-id": record.reservation_id,
        "security-groups": list(record.security_groups),
    }
    if record.key is not None:
        meta["public-keys"] = {
            "0": {"_name": f"0={record.key.name}", "openssh-key": record.key.data}
        }
    if at_least("2007-01-19", version, EC2_VERSIONS):
        meta["local-hostname"] = record.hostname
        meta["public-hostname"] = record.hostname
        meta["public-ipv4"] = floating[0] if floating else ""
    if at_least("2007-08-29", version, EC2_VERSIONS):
        meta["instance-type"] = record.flavor_name
    if at_least("2007-12-15", version, EC2_VERSIONS):
        meta["block-device-mapping"] = _device_mapping(record)
        if record.kernel_id:
            meta["kernel-id"] = _image_id("aki", record.kernel_id)
        if record.ramdisk_id:
            meta["ramdisk-id"] = _image_id("ari", record.ramdisk_id)
    if at_least("2008-02-01", version, EC2_VERSIONS):
        meta["placement"] = {"availability-zone": record.availability_zone}
    if at_least("2008-09-01", version, EC2_VERSIONS):
        meta["instance-action"] = "none"
    data: Tree = {"meta-data": meta}
    if record.user_data is not None:
        data["user-data"] = base64.b64decode(record.user_data)
    return data


def find(data: Any, tokens: list[str]) -> Any:
    """The node at ``tokens`` below ``data`` (KeyError when there is none)."""
    for token in tokens:
        if isinstance(data, dict) and token in data:
            data = data[token]
        elif isinstance(data, list) and token in data:
            data = token
        else:
            raise KeyError("/".join(tokens))
    return data


def listing(data: Any) -> bytes:
    """A node as the EC2 service prints it: a directory lists its entries (``name/`` for a
    sub-directory, its ``_name`` for a named one), a list one item a line."""
    if isinstance(data, dict):
        lines = []
        for key in sorted(data):
            if key == "_name":
                continue
            value = data[key]
            if isinstance(value, dict):
                lines.append(str(value["_name"]) if "_name" in value else f"{key}/")
            else:
                lines.append(key)
        return "\n".join(lines).encode()
    if isinstance(data, list):
        return "\n".join(str(item) for item in data).encode()
    if isinstance(data, bytes):
        return data
    return str(data).encode()
