"""A server's security groups as Kubernetes NetworkPolicies (issue 12, decision 0077).

One NetworkPolicy per security group on the server's pod-network port, in the server's
namespace, selecting its virt-launcher pod by the ``nova.openstack.org/server-id`` label the
driver puts on the VMI template, ``policyTypes`` both Ingress and Egress. Neutron's and
NetworkPolicy's semantics agree where it matters: a port with groups drops what no rule of any
of them allows (a pod selected by a policy drops what no selecting policy allows), rules add up.

A rule is mapped when NetworkPolicy can say it:

- protocol: none (any) → no ``ports`` (every protocol); ``tcp``/``udp``/``sctp`` (names or
  IANA numbers 6/17/132) → ``ports`` with ``port`` and, for a range, ``endPort``; no port range:
  the protocol alone.
- remote: ``remote_ip_prefix`` → ``ipBlock.cidr``; ``remote_group_id`` → a ``podSelector`` on
  the server-id label of the servers whose ports have that group (resolved when the policies
  are written, so a new member is let in at the next refresh); neither → every address of the
  rule's ethertype (``0.0.0.0/0`` / ``::/0``) and every pod (``namespaceSelector: {}``).

Not mappable, and left out (fail closed: the traffic they would allow stays denied, as for
a missing rule): other protocols (``icmp``, ``ipv6-icmp``, ``gre``..., which NetworkPolicy
cannot name), ``remote_address_group_id`` (Neutron address groups), a remote group with no
member server (nothing to let in: an empty peer list would mean *everyone*). The policy lists
them in its ``nova.openstack.org/unmapped-rules`` annotation.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openkeel.virt.kubevirt.manifests import naming

JsonObj = dict[str, Any]

LABEL_SECURITY_GROUP_ID = f"{naming.DOMAIN}/security-group-id"
ANNOTATION_UNMAPPED = f"{naming.DOMAIN}/unmapped-rules"

_PROTOCOLS = {"tcp": "TCP", "6": "TCP", "udp": "UDP", "17": "UDP", "sctp": "SCTP", "132": "SCTP"}
_ANY = {"IPv4": "0.0.0.0/0", "IPv6": "::/0"}


@dataclass(frozen=True)
class Unmapped:
    rule_id: str
    reason: str


def policy_name(server_uuid: str, group_id: str) -> str:
    return naming.dns_subdomain(f"sg-{server_uuid}-{group_id}")


def server_pods(server_uuids: Sequence[str]) -> JsonObj:
    """The podSelector of the virt-launcher pods of these servers."""
    values = sorted({naming.label_value(u) for u in server_uuids})
    return {"matchExpressions": [
        {"key": naming.LABEL_SERVER_ID, "operator": "In", "values": values}]}  # fmt: skip


def _ports(rule: Mapping[str, Any]) -> list[JsonObj] | str | None:
    """``ports`` of the rule (None: every protocol), or why it cannot be said."""
    protocol = rule.get("protocol")
    if protocol in (None, "", "any"):
        return None
    name = _PROTOCOLS.get(str(protocol).lower())
    if name is None:
        return f"protocol {protocol} is not TCP, UDP or SCTP"
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if low is None:
        return [{"protocol": name}]
    port: JsonObj = {"protocol": name, "port": int(low)}
    if high is not None and int(high) > int(low):
        port["endPort"] = int(high)
    return [port]


def _peers(rule: Mapping[str, Any], members: Mapping[str, Sequence[str]]) -> list[JsonObj] | str:
    """The ``from``/``to`` peers of the rule, or why it cannot be said."""
    if rule.get("remote_address_group_id"):
        return "remote address groups are not mappable"
    group = rule.get("remote_group_id")
    if group:
        servers = members.get(str(group)) or ()
        if not servers:
            return f"remote group {group} has no server"
        return [{"podSelector": server_pods(servers)}]
    ethertype = str(rule.get("ethertype") or "IPv4")
    prefix = rule.get("remote_ip_prefix")
    if prefix:
        return [{"ipBlock": {"cidr": str(ipaddress.ip_network(str(prefix), strict=False))}}]
    return [{"ipBlock": {"cidr": _ANY.get(ethertype, _ANY["IPv4"])}}, {"namespaceSelector": {}}]


def map_rule(rule: Mapping[str, Any], members: Mapping[str, Sequence[str]]) -> JsonObj | Unmapped:
    """One Neutron rule as a NetworkPolicy ingress/egress entry, or why not."""
    ports, peers = _ports(rule), _peers(rule, members)
    for problem in (ports, peers):
        if isinstance(problem, str):
            return Unmapped(str(rule.get("id")), problem)
    side = "from" if rule.get("direction") == "ingress" else "to"
    entry: JsonObj = {side: peers}
    if ports is not None:
        entry["ports"] = ports
    return entry


def network_policy(
    server_uuid: str,
    namespace: str,
    group: Mapping[str, Any],
    members: Mapping[str, Sequence[str]],
) -> JsonObj:
    """The NetworkPolicy of one security group of a server."""
    ingress: list[JsonObj] = []
    egress: list[JsonObj] = []
    unmapped: list[str] = []
    for rule in group.get("security_group_rules") or ():
        mapped = map_rule(rule, members)
        if isinstance(mapped, Unmapped):
            unmapped.append(f"{mapped.rule_id}: {mapped.reason}")
            continue
        (ingress if rule.get("direction") == "ingress" else egress).append(mapped)
    labels = {
        naming.LABEL_MANAGED_BY: naming.MANAGED_BY,
        naming.LABEL_SERVER_ID: naming.label_value(server_uuid),
        LABEL_SECURITY_GROUP_ID: naming.label_value(str(group["id"])),
    }
    metadata: JsonObj = {"name": policy_name(server_uuid, str(group["id"])),
                         "namespace": namespace, "labels": labels}  # fmt: skip
    if unmapped:
        metadata["annotations"] = {ANNOTATION_UNMAPPED: json.dumps(unmapped)}
    spec: JsonObj = {
        "podSelector": {"matchLabels": {naming.LABEL_SERVER_ID: naming.label_value(server_uuid)}},
        "policyTypes": ["Ingress", "Egress"],
    }
    # No entry for a direction: with its policy type listed, nothing is allowed that way
    # (an empty list is the same and the API server stores it as absent).
    spec.update({key: rules for key, rules in (("ingress", ingress), ("egress", egress)) if rules})
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": metadata, "spec": spec}  # fmt: skip
