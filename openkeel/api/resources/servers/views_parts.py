"""Pieces of a server body: links, image, flavor, addresses, fault, volumes (Nova's shapes).

Used by ``views_server.py`` and ``views_list.py``; each function renders one field.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.servers.records import AttachedVolume
from openkeel.domain.instances import FlavorSnapshot, Instance, InstanceFault

IMAGE_PROPERTY_PREFIX = "image_"


def isotime(value: datetime | None) -> str:
    """Nova's ``utils.isotime`` for naive UTC datetimes (``2024-01-02T03:04:05Z``); like
    Nova's, a missing time (a build request never updated) renders as now."""
    at = value if value is not None else datetime.now(UTC).replace(tzinfo=None)
    if at.year < 1000 or at.tzinfo is not None:  # isoformat would not pad / would add +00:00
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return at.isoformat(timespec="seconds") + "Z"  # the same text, several times faster


def links(req: ApiRequest, server_id: str) -> list[dict[str, str]]:
    """``self`` and ``bookmark`` links of a server."""
    return [
        {"rel": "self", "href": req.self_link("servers", server_id)},
        {"rel": "bookmark", "href": req.bookmark_link("servers", server_id)},
    ]


@functools.lru_cache(maxsize=4096)
def host_id(host: str | None, project_id: str | None) -> str:
    """The obfuscated host id: sha224 of project + host, "" without a host (cached: a page
    of servers shares few hosts)."""
    if not host:
        return ""
    return hashlib.sha224((str(project_id) + host).encode("utf-8")).hexdigest()


def image(
    req: ApiRequest, instance: Instance, standard_props: frozenset[str] | None
) -> dict[str, Any] | str:
    """The image reference ("" for a volume-backed server); 2.98 adds its properties."""
    if not instance.image_ref:
        return ""
    image_id = instance.image_ref.rstrip("/").rsplit("/", 1)[-1]
    body: dict[str, Any] = {
        "id": image_id,
        "links": [{"rel": "bookmark", "href": req.bookmark_link("images", image_id)}],
    }
    if standard_props is not None:
        cut = len(IMAGE_PROPERTY_PREFIX)
        body["properties"] = {
            key[cut:]: value
            for key, value in instance.system_metadata.items()
            if key.startswith(IMAGE_PROPERTY_PREFIX)
            and key[cut:] in standard_props
            and value is not None
        }
    return body


def flavor(
    req: ApiRequest, snapshot: FlavorSnapshot | None, embedded: bool, with_specs: bool
) -> dict[str, Any]:
    """Before 2.47 a link to the flavor; from 2.47 the embedded flavor description."""
    if snapshot is None:
        return {}
    if embedded:
        body: dict[str, Any] = {
            "vcpus": snapshot.vcpus,
            "ram": snapshot.memory_mb,
            "disk": snapshot.root_gb,
            "ephemeral": snapshot.ephemeral_gb,
            "swap": snapshot.swap,
            "original_name": snapshot.name,
        }
        if with_specs:
            body["extra_specs"] = dict(snapshot.extra_specs)
        return body
    flavor_id = str(snapshot.flavorid)
    return {
        "id": flavor_id,
        "links": [{"rel": "bookmark", "href": req.bookmark_link("flavors", flavor_id)}],
    }


def _fixed_ips(vif: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    network = vif.get("network") or {}
    return [ip for subnet in network.get("subnets") or [] for ip in subnet.get("ips") or []]


def _address(ip: Mapping[str, Any], mac: str | None, extended: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"version": ip.get("version"), "addr": ip.get("address")}
    if extended:
        body["OS-EXT-IPS:type"] = ip.get("type")
        body["OS-EXT-IPS-MAC:mac_addr"] = mac
    return body


def addresses(instance: Instance, extended: bool) -> dict[str, list[dict[str, Any]]]:
    """Addresses by network label from the info cache: fixed ones, then floating ones."""
    if instance.vm_state == "building":
        return {}
    fixed: dict[str, list[dict[str, Any]]] = {}
    floating: dict[str, list[dict[str, Any]]] = {}
    for vif in instance.network_info:
        label = str((vif.get("network") or {}).get("label"))
        mac = vif.get("address")
        fixed.setdefault(label, [])
        floating.setdefault(label, [])
        for ip in _fixed_ips(vif):
            fixed[label].append(_address(ip, mac, extended))
            for fip in ip.get("floating_ips") or []:
                floating[label].append(_address(fip, mac, extended))
    return {label: fixed[label] + floating[label] for label in fixed}


def fault(item: InstanceFault | None, is_admin: bool) -> dict[str, Any] | None:
    """The latest fault; details only for admins or non-500 faults."""
    if item is None:
        return None
    body: dict[str, Any] = {
        "code": item.code,
        "created": isotime(item.created_at),
        "message": item.message,
    }
    if item.details and (is_admin or item.code != 500):
        body["details"] = item.details
    return body


def volumes(attached: Iterable[AttachedVolume], with_delete_flag: bool) -> list[dict[str, Any]]:
    """``os-extended-volumes:volumes_attached``; 2.3 adds ``delete_on_termination``."""
    out: list[dict[str, Any]] = []
    for volume in attached:
        entry: dict[str, Any] = {"id": volume.volume_id}
        if with_delete_flag:
            entry["delete_on_termination"] = volume.delete_on_termination
        out.append(entry)
    return out
