"""A server's security groups are its ports' groups (Nova over Neutron): the checks and the
new group lists of ``addSecurityGroup`` / ``removeSecurityGroup``, and Nova's view of a group.

Shared by the flat and the Neutron adapters, which each read and write ports their own way;
also the Neutron rule Nova asks for when it adds a rule (``neutron_rule``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openkeel.network import errors
from openkeel.network.adapter import IngressRule

Port = Mapping[str, Any]
# (port id, the port's new security group ids)
PortGroups = tuple[str, list[str]]


def server_group(
    find: Callable[[str, str], str], ports: Sequence[Port], uuid: str, project_id: str, name: str
) -> str:
    """The id of the project's group ``name`` for an action on the server's ``ports``
    (404s: no such group, a server without ports)."""
    try:
        group_id = find(project_id, name)
    except errors.SecurityGroupNotFound:
        raise errors.InstanceSecurityGroupNotFound(
            f"Security group {name} is not found for project {project_id}"
        ) from None
    if not ports:
        raise errors.InstanceSecurityGroupNotFound(
            f"instance_id {uuid} could not be found as device id on any ports"
        )
    return group_id


def adding(ports: Sequence[Port], group_id: str) -> list[PortGroups]:
    """The ports lacking the group, with it added; refused when a port has no address or no
    port security."""
    for port in ports:
        if not (port.get("fixed_ips") and port.get("port_security_enabled", True)):
            raise errors.SecurityGroupCannotBeApplied()
    return [
        (str(port["id"]), [*port["security_groups"], group_id])
        for port in ports
        if group_id not in port["security_groups"]
    ]


def removing(ports: Sequence[Port], group_id: str, uuid: str, name: str) -> list[PortGroups]:
    """The ports having the group, without it; 404 when none has it."""
    out = [
        (str(port["id"]), [g for g in port["security_groups"] if g != group_id])
        for port in ports
        if group_id in port["security_groups"]
    ]
    if not out:
        raise errors.InstanceSecurityGroupNotFound(
            f"Security group {name} not associated with the instance {uuid}"
        )
    return out


def port_security(ports: Sequence[Port], groups: Callable[[list[str]], Mapping[str, Port]]) -> dict[str, Any]:  # fmt: skip
    """``NetworkAdapter.port_security_groups`` from the server's ports and a reader of the
    groups (with their rules) by id."""
    by_port = {str(p["id"]): [str(g) for g in p.get("security_groups") or ()] for p in ports}
    wanted = sorted({g for ids in by_port.values() for g in ids})
    found = groups(wanted) if wanted else {}
    return {"ports": by_port, "groups": {g: dict(found[g]) for g in wanted if g in found}}


def members(ports: Sequence[Port], group_id: str) -> list[str]:
    """The servers whose ports (among ``ports``) have the group."""
    return sorted({str(p["device_id"]) for p in ports
                   if group_id in (p.get("security_groups") or ())
                   and str(p.get("device_owner") or "").startswith("compute:")
                   and p.get("device_id")})  # fmt: skip


def nova_group(group: Port, rules: Sequence[Port]) -> dict[str, Any]:
    """A Neutron group and its rules in Nova's form (ingress rules only)."""
    return {
        "id": group["id"],
        "name": group["name"],
        "description": group.get("description", ""),
        "project_id": group.get("project_id"),
        "rules": [nova_rule(r) for r in rules if r.get("direction") == "ingress"],
    }


def nova_rule(rule: Port) -> dict[str, Any]:
    """A Neutron rule in Nova's form (whole TCP/UDP range, or -1 for other protocols, when the
    rule names a protocol but no ports)."""
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    protocol = rule.get("protocol")
    if protocol and low is None and high is None:
        low, high = (1, 65535) if str(protocol).upper() in ("TCP", "UDP") else (-1, -1)
    return {"id": rule["id"], "parent_group_id": rule["security_group_id"], "protocol": protocol,
            "from_port": low, "to_port": high, "group_id": rule.get("remote_group_id"),
            "cidr": rule.get("remote_ip_prefix") or "0.0.0.0/0"}  # fmt: skip


def neutron_rule(rule: IngressRule) -> dict[str, Any]:
    """Nova's rule as the Neutron rule it asks for (ethertype from the CIDR, -1: no port)."""
    version = ipaddress.ip_network(rule.cidr, strict=False).version if rule.cidr else 4
    body: dict[str, Any] = {
        "security_group_id": rule.parent_group_id, "direction": "ingress",
        "ethertype": "IPv6" if version == 6 else "IPv4", "protocol": rule.protocol,
        "remote_ip_prefix": rule.cidr, "remote_group_id": rule.group_id,
    }  # fmt: skip
    if rule.from_port is not None and rule.from_port != -1:
        body["port_range_min"] = rule.from_port
    if rule.to_port is not None and rule.to_port != -1:
        body["port_range_max"] = rule.to_port
    return body
