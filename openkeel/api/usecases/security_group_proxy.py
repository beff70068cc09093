"""The ``os-security-groups`` and ``os-security-group-rules`` proxies (2.1-2.35): the
project's security groups through the network adapter, checked and answered as Nova 34.0.0
answers them over Neutron.

Nova's own checks come first (a group or rule id that is not a UUID 400; a rule's protocol,
ports and CIDR; a rule that already exists 400); then the network's answers as Nova translates
them: an unknown group or rule 404, what Neutron refuses 400 (a group in use, bad input), its
409 on a create (over quota, a second ``default``) 403. Called by the security_groups
resource's proxy handlers.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.security_groups import POLICY, group_view, rule_view
from openkeel.domain.errors import Invalid
from openkeel.network import errors as net_errors
from openkeel.network.adapter import IngressRule, Requester
from openkeel.network.factory import get_network_adapter


@dataclass(frozen=True)
class RuleRequest:
    """The body of ``POST /os-security-group-rules`` (ports and protocol unchecked, as sent)."""

    parent_group_id: str
    group_id: str | None = None
    ip_protocol: Any = None
    from_port: Any = None
    to_port: Any = None
    cidr: Any = None


def _uuid(ident: str) -> str:
    try:
        uuid.UUID(ident)
    except ValueError:
        raise Invalid("Security group id should be uuid") from None
    return ident


def _parse_cidr(cidr: Any) -> str:
    """Nova's parse_cidr: none is everything; otherwise an address/prefix pair."""
    if not cidr:
        return "0.0.0.0/0"
    text = urllib.parse.unquote(str(cidr))
    try:
        if text.count("/") != 1:
            raise ValueError(text)
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise Invalid(f"{text} is not a valid IP network.") from None
    return text


def _ports(protocol: str, low: Any, high: Any) -> tuple[int, int]:
    """Nova's checks of a rule's ports (ICMP: type and code)."""
    upper = protocol.upper()
    try:
        low, high = int(low), int(high)
    except (TypeError, ValueError):
        what = "Type and Code must be integers for ICMP protocol type" if upper == "ICMP" \
            else "To and From ports must be integers"  # fmt: skip
        raise Invalid(f"Invalid input received: {what}") from None
    if upper not in ("TCP", "UDP", "ICMP"):
        raise Invalid(f"Invalid IP protocol {protocol}.")
    reason = None
    if upper in ("TCP", "UDP") and low > high:
        reason = "Former value cannot be greater than the later"
    elif upper in ("TCP", "UDP") and (low < 1 or high > 65535):
        reason = f"Valid {upper} ports should be between 1-65535"
    elif upper == "ICMP" and not (-1 <= low <= 255 and -1 <= high <= 255):
        reason = "For ICMP, the type:code must be valid"
    if reason:
        raise Invalid(f"Invalid port range {low}:{high}. {reason}")
    return low, high


def ingress_rule(request: RuleRequest) -> IngressRule | None:
    """Nova's new ingress rule from the request (None: not enough to build one)."""
    protocol, low, high = request.ip_protocol, request.from_port, request.to_port
    cidr = None
    if request.group_id is not None:
        upper = str(protocol).upper() if protocol else ""
        if low is None and high is None and upper == "ICMP":
            low, high = -1, -1
        elif low is None and high is None and upper in ("TCP", "UDP"):
            low, high = 1, 65535
    else:
        cidr = _parse_cidr(request.cidr)
    if not (protocol and low is not None and high is not None):
        if cidr:
            return None
        return IngressRule(request.parent_group_id, group_id=request.group_id)
    low, high = _ports(str(protocol), low, high)
    return IngressRule(request.parent_group_id, str(protocol), low, high, cidr, request.group_id)


def _exists(group: dict[str, Any], rule: IngressRule) -> bool:
    """Nova's duplicate check (on the group's ingress rules, field by field)."""
    wanted = {"group_id": rule.group_id, "cidr": rule.cidr, "from_port": rule.from_port,
              "to_port": rule.to_port, "protocol": rule.protocol}  # fmt: skip
    return any(all(r.get(k) == v for k, v in wanted.items()) for r in group["rules"])


class SecurityGroupProxy:
    """Security groups and rules as one caller sees them."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._context = context
        self._network = get_network_adapter(services.conf, services.api_db)
        self._caller = Requester(str(context.project_id), context.is_admin)

    def _can(self, rule: str) -> None:
        self._context.can(POLICY % rule, {"project_id": self._context.project_id})

    def _view(self, group: dict[str, Any]) -> dict[str, Any]:
        """Nova's format, each remote group looked up (one the caller cannot see: rule left
        out)."""
        names = {group["id"]: {"name": group["name"], "tenant_id": group["project_id"]}}
        for rule in group["rules"]:
            source = rule["group_id"]
            if source and source not in names:
                try:
                    found = self._network.get_security_group(self._caller, source)
                except net_errors.SecurityGroupMissing:
                    continue
                names[source] = {"name": found["name"], "tenant_id": found["project_id"]}
        return group_view(group, names)

    def list(self, all_tenants: bool, offset: int, limit: int | None, max_limit: int) -> list[
        dict[str, Any]
    ]:  # fmt: skip
        self._can("get")
        groups = self._network.list_security_groups(self._caller, all_tenants)
        page = min(max_limit, limit or max_limit)
        shown = [self._view(g) for g in groups[offset : offset + page]]
        return sorted(shown, key=lambda g: (g["tenant_id"], g["name"]))

    def show(self, group_id: str) -> dict[str, Any]:
        self._can("show")
        return self._view(self._network.get_security_group(self._caller, _uuid(group_id)))

    def create(self, name: str, description: str) -> dict[str, Any]:
        self._can("create")
        return self._view(self._network.create_security_group(self._caller, name, description))

    def update(self, group_id: str, name: str, description: str) -> dict[str, Any]:
        self._can("update")
        group = self._network.get_security_group(self._caller, _uuid(group_id))
        updated = self._network.update_security_group(self._caller, group["id"], name, description)
        return self._view(updated)

    def delete(self, group_id: str) -> None:
        self._can("delete")
        group = self._network.get_security_group(self._caller, _uuid(group_id))
        self._network.delete_security_group(self._caller, group["id"])

    def create_rule(self, request: RuleRequest) -> dict[str, Any]:
        self._can("rule:create")
        group = self._network.get_security_group(self._caller, request.parent_group_id)
        source = None
        if request.group_id is not None:
            found = self._network.get_security_group(self._caller, request.group_id)
            source = {"name": found["name"], "tenant_id": found["project_id"]}
        rule = ingress_rule(request)
        if rule is None:
            raise Invalid("Not enough parameters to build a valid rule.")
        if rule.cidr:
            network = ipaddress.ip_network(rule.cidr, strict=False)
            if network.prefixlen == 0 and rule.cidr.split("/")[0] not in ("0.0.0.0", "::"):
                raise Invalid(f"Bad prefix for network in cidr {rule.cidr}")
        if _exists(group, rule):
            raise Invalid(f"This rule already exists in group {group['id']}")
        made = self._network.create_security_group_rule(self._caller, rule)
        return rule_view(made, source)

    def delete_rule(self, rule_id: str) -> None:
        self._can("rule:delete")
        rule = self._network.get_security_group_rule(self._caller, _uuid(rule_id))
        self._network.get_security_group(self._caller, rule["parent_group_id"])
        self._network.delete_security_group_rule(self._caller, rule["id"])
