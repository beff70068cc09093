"""``POST /servers`` body -> ``CreateServers`` (the request-to-command step, per microversion).

Raises Nova's 400s for what the schema cannot express (network entries, BDM syntax mix,
min/max count, missing imageRef).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers.access_ips import access_ips
from openkeel.api.usecases.servers.bdm_parsing import parse_bdms
from openkeel.api.usecases.servers.commands import CreateServers, NetworkRequest
from openkeel.domain.errors import Invalid

_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})


def as_bool(value: Any) -> bool:
    """oslo's ``bool_from_string`` (non-strict, default False)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def normalize_name(name: str) -> str:
    """Nova strips surrounding whitespace from names (kept by the v2.0 schema)."""
    return name.strip()


def _flavor_id(ref: Any) -> str:
    text = str(ref)
    return text.rstrip("/").rsplit("/", 1)[-1]


def parse_networks(raw: Any) -> tuple[NetworkRequest, ...] | str | None:
    """The ``networks`` entry: 'auto'/'none' (2.37) or a list with Nova's checks."""
    if raw is None or isinstance(raw, str):
        return raw
    requests: list[NetworkRequest] = []
    ports: list[str] = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise Invalid("Bad networks format")
        port = item.get("port")
        fixed_ip = item.get("fixed_ip")
        tag = item.get("tag")
        if port:
            if port in ports:
                raise Invalid(
                    f"Port ID '{port}' was specified twice: you cannot attach a port "
                    "multiple times."
                )
            if fixed_ip is not None:
                raise Invalid(
                    f"Specified Fixed IP '{fixed_ip}' cannot be used with port '{port}': "
                    "the two cannot be specified together."
                )
            ports.append(port)
            requests.append(NetworkRequest(port_id=port, tag=tag))
            continue
        if "uuid" not in item:
            raise Invalid("Bad network format: missing 'uuid'")
        net_id = item["uuid"]
        if not _uuid_like(net_id):
            raise Invalid(f"Bad networks format: network uuid is not in proper format ({net_id})")
        requests.append(NetworkRequest(network_id=net_id, fixed_ip=fixed_ip, tag=tag))
    return tuple(requests)


def _uuid_like(value: Any) -> bool:
    try:
        return str(uuid.UUID(str(value))).replace("-", "") == str(value).replace("-", "").lower()
    except (TypeError, ValueError, AttributeError):
        return False


def _counts(server: Mapping[str, Any]) -> tuple[int, int]:
    min_count = int(server.get("min_count", 1))
    max_count = int(server.get("max_count", min_count))
    if min_count > max_count:
        raise Invalid("min_count must be <= max_count")
    return min_count, max_count


def _hints(body: Mapping[str, Any]) -> dict[str, Any]:
    if "os:scheduler_hints" in body:
        return dict(body["os:scheduler_hints"])
    return dict(body.get("OS-SCH-HNT:scheduler_hints") or {})


def _security_groups(server: Mapping[str, Any]) -> tuple[str, ...] | None:
    groups = server.get("security_groups")
    if groups is None:
        return None
    return tuple(sorted({g["name"] for g in groups if g.get("name")}))


def _disk_config(server: Mapping[str, Any]) -> bool | None:
    value = server.get("OS-DCF:diskConfig")
    return None if value is None else value == "AUTO"


def create_command(req: ApiRequest) -> CreateServers:
    """Interpret a validated ``POST /servers`` body at the request's microversion."""
    body = req.body
    server = body["server"]
    name = normalize_name(server["name"])
    bdms, legacy = parse_bdms(server)
    image_ref = server.get("imageRef") or ""
    if not image_ref and not bdms:
        raise Invalid("Missing imageRef attribute")
    min_count, max_count = _counts(server)
    certs = server.get("trusted_image_certificates")
    ips = access_ips(server)
    return CreateServers(
        name=name,
        flavor_ref=_flavor_id(server["flavorRef"]),
        image_ref=image_ref,
        description=server.get("description") if req.at_least("2.19") else name,
        hostname=server.get("hostname") if req.at_least("2.90") else None,
        admin_pass=server.get("adminPass"),
        metadata=dict(server.get("metadata") or {}),
        user_data=server.get("user_data"),
        key_name=server.get("key_name"),
        config_drive=as_bool(server.get("config_drive", False)),
        access_ip_v4=ips.get("access_ip_v4"),
        access_ip_v6=ips.get("access_ip_v6"),
        auto_disk_config=_disk_config(server),
        networks=parse_networks(server.get("networks")),
        block_device_mappings=bdms,
        legacy_bdm=legacy,
        multiattach=req.at_least("2.60"),
        min_count=min_count,
        max_count=max_count,
        return_reservation_id=as_bool(server.get("return_reservation_id", False)),
        security_groups=_security_groups(server),
        availability_zone=server.get("availability_zone"),
        scheduler_hints=_hints(body),
        tags=tuple(server.get("tags") or ()) if req.at_least("2.52") else (),
        trusted_certs=tuple(certs) if certs else None,
        personality=tuple(
            (f.get("path", ""), f.get("contents", "")) for f in server.get("personality") or ()
        ),
        requested_host=server.get("host"),
        requested_node=server.get("hypervisor_hostname"),
    )
