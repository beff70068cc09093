"""Block device mappings of ``POST /servers``: syntax checks with Nova's messages (Nova's
BlockDeviceDict.from_api and the legacy syntax's validation). The checks that ask the volume
and image services are ``create_volumes.py``'s.

Called by the create request parser (``resources/servers/create_request.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from openkeel.domain.errors import Invalid

_NEW_FIELDS = frozenset(
    {
        "source_type", "destination_type", "guest_format", "device_type", "disk_bus",
        "boot_index", "device_name", "delete_on_termination", "snapshot_id", "volume_id",
        "volume_size", "image_id", "no_device", "connection_info", "tag", "volume_type",
        "encrypted", "encryption_secret_uuid", "encryption_format", "encryption_options",
    }
)  # fmt: skip
_DB_ONLY = frozenset(
    {"id", "instance_uuid", "attachment_id", "uuid", "created_at", "updated_at", "deleted_at",
     "deleted"}
)  # fmt: skip
_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})
_SWAP_OR_EPHEMERAL = re.compile(r"^(swap|ephemeral\d+)$")


class InvalidBDMFormat(Invalid):
    """Nova's InvalidBDMFormat (400)."""

    def __init__(self, details: str) -> None:
        super().__init__(f"Block Device Mapping is Invalid: {details}")


def _bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in _TRUE


def _validate(bdm: dict[str, Any]) -> None:
    invalid = set(bdm) - (_NEW_FIELDS | _DB_ONLY)
    if invalid:
        raise InvalidBDMFormat(f"Following fields are invalid: {' '.join(sorted(invalid))}")
    if bdm.get("no_device"):
        return
    if "source_type" not in bdm:
        raise InvalidBDMFormat("Some required fields are missing")
    if "delete_on_termination" in bdm:
        bdm["delete_on_termination"] = _bool(bdm["delete_on_termination"])
    if bdm.get("volume_size") is not None:
        bdm["volume_size"] = int(bdm["volume_size"])
    if bdm.get("boot_index"):
        try:
            bdm["boot_index"] = int(bdm["boot_index"])
        except ValueError:
            raise InvalidBDMFormat("Boot index is invalid.") from None


def _from_api(raw: Mapping[str, Any], image_given: bool) -> dict[str, Any]:
    bdm = dict(raw)
    if not bdm.get("no_device"):
        source = bdm.get("source_type")
        device_uuid = bdm.get("uuid")
        destination = bdm.get("destination_type")
        volume_type = bdm.get("volume_type")
        if source == "blank" and device_uuid:
            raise InvalidBDMFormat("Invalid device UUID.")
        if source != "blank":
            if not device_uuid:
                raise InvalidBDMFormat("Missing device UUID.")
            bdm[f"{source}_id"] = device_uuid
        if source == "image" and destination == "local":
            raw_index = bdm.get("boot_index")
            boot_index = int(raw_index) if raw_index is not None else -1
            if not (image_given and boot_index == 0):
                raise InvalidBDMFormat("Mapping image to local is not supported.")
        if destination == "local" and volume_type:
            raise InvalidBDMFormat(
                "Specifying a volume_type with destination_type=local is not supported."
            )
        if source == "volume" and volume_type:
            raise InvalidBDMFormat("Specifying volume type to existing volume is not supported.")
    bdm.pop("uuid", None)
    _validate(bdm)
    bdm["delete_on_termination"] = bool(bdm.get("delete_on_termination"))
    return bdm


def _from_legacy(raw: Mapping[str, Any]) -> dict[str, Any]:
    bdm = dict(raw)
    if "delete_on_termination" in bdm:
        bdm["delete_on_termination"] = _bool(bdm["delete_on_termination"])
    virtual = bdm.get("virtual_name")
    if not (
        (virtual and _SWAP_OR_EPHEMERAL.match(virtual))
        or bdm.get("snapshot_id")
        or bdm.get("volume_id")
        or bdm.get("no_device")
    ):
        raise InvalidBDMFormat("Unrecognized legacy format.")
    return bdm


def parse_bdms(server: Mapping[str, Any]) -> tuple[tuple[dict[str, Any], ...], bool]:
    """The requested mappings and whether they use the legacy syntax."""
    legacy = server.get("block_device_mapping") or []
    new = server.get("block_device_mapping_v2") or []
    if legacy and new:
        raise Invalid(
            "Using different block_device_mapping syntaxes is not allowed in the same request."
        )
    if legacy:
        return tuple(_from_legacy(b) for b in legacy), True
    image_given = server.get("imageRef") not in (None, "")
    return tuple(_from_api(b, image_given) for b in new), False
