"""Neutron's QoS subset Nova's clients use (decision 0076): policies, minimum bandwidth and
minimum packet rate rules, ``qos_policy_id`` of networks and ports, and the ports'
``resource_request`` Neutron computes from them (the ``port-resource-request-groups`` form).

A port's policy is its own, else its network's (not for ``network:*`` ports, as Neutron).
Minimum bandwidth rules ask for ``NET_BW_{EGR,IGR}_KILOBIT_PER_SEC`` with the traits of the
network's physnet and the port's vnic type; a network without a physnet gets no bandwidth
group (Neutron's tunnelled networks are outside this subset). Minimum packet rate rules ask
for ``NET_PACKET_RATE_[EGR_|IGR_]KILOPACKET_PER_SEC`` with the vnic type's trait. Group ids are
name-based uuids of the port (stable, as Neutron's).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from openkeel.db.network_store import Row
from openkeel.domain import resource_requests as rr
from openkeel.network.embedded.faults import BadRequest, Conflict, PolicyNotAuthorized, not_found
from openkeel.network.embedded.service import Caller, NetworkService, new_id

RULE_TYPES = {"minimum_bandwidth": "min_kbps", "minimum_packet_rate": "min_kpps"}
_DIRECTIONS = {
    "minimum_bandwidth": ("egress", "ingress"),
    "minimum_packet_rate": ("egress", "ingress", "any"),
}


def get_policy(service: NetworkService, caller: Caller, ident: str) -> Row:
    row = service.store.get("qos_policies", ident)
    if row is None or not (
        caller.is_admin or row["shared"] or row["project_id"] == caller.project_id
    ):
        raise not_found("qos_policy", ident)
    return row


def _owned_policy(service: NetworkService, caller: Caller, ident: str) -> Row:
    row = get_policy(service, caller, ident)
    if not (caller.is_admin or row["project_id"] == caller.project_id):
        raise PolicyNotAuthorized("rule:update_policy")
    return row


def create_policy(service: NetworkService, caller: Caller, ref: Mapping[str, Any]) -> Row:
    if ref.get("shared") and not caller.is_admin:
        raise PolicyNotAuthorized("rule:create_policy:shared")
    project = service._project_of(caller, ref)
    return service.store.insert("qos_policies", {
        "id": new_id(), "name": ref.get("name") or "", "project_id": project,
        "description": ref.get("description") or "", "shared": bool(ref.get("shared")),
        "is_default": bool(ref.get("is_default")),
    })  # fmt: skip


def update_policy(
    service: NetworkService, caller: Caller, ident: str, ref: Mapping[str, Any]
) -> Row:
    _owned_policy(service, caller, ident)
    values = {k: ref[k] for k in ("name", "description", "shared", "is_default") if k in ref}
    return service._updated("qos_policies", ident, values)


def delete_policy(service: NetworkService, caller: Caller, ident: str) -> None:
    _owned_policy(service, caller, ident)
    users = service.store.list("qos_bindings", qos_policy_id=ident)
    if users:
        raise Conflict(
            f"QoS Policy {ident} is used by {_holder(service, users[0]['id'])} {users[0]['id']}.",
            "QosPolicyInUse",
        )
    for rule in service.store.list("qos_rules", qos_policy_id=ident):
        service.store.delete("qos_rules", rule["id"])
    service.store.delete("qos_policies", ident)


def _holder(service: NetworkService, ident: str) -> str:
    return "network" if service.store.get("networks", ident) is not None else "port"


def rules_of(service: NetworkService, policy_id: str, rule_type: str | None = None) -> list[Row]:
    rules = service.store.list("qos_rules", qos_policy_id=policy_id)
    return [r for r in rules if rule_type is None or r["type"] == rule_type]


def get_rule(
    service: NetworkService, caller: Caller, policy_id: str, rule_type: str, ident: str
) -> Row:
    get_policy(service, caller, policy_id)
    row = service.store.get("qos_rules", ident)
    if row is None or row["qos_policy_id"] != policy_id or row["type"] != rule_type:
        raise not_found("qos_rule", ident)
    return row


def create_rule(
    service: NetworkService, caller: Caller, policy_id: str, rule_type: str,
    ref: Mapping[str, Any],
) -> Row:  # fmt: skip
    _owned_policy(service, caller, policy_id)
    amount_key = RULE_TYPES[rule_type]
    direction = str(ref.get("direction") or "egress")
    if direction not in _DIRECTIONS[rule_type]:
        raise BadRequest(f"Invalid input for direction. Reason: '{direction}' is not in "
                         f"{list(_DIRECTIONS[rule_type])}.")  # fmt: skip
    amount = ref.get(amount_key)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
        raise BadRequest(f"Invalid input for {amount_key}. Reason: '{amount}' is not an integer "
                         "or is out of range.")  # fmt: skip
    if any(r["direction"] == direction for r in rules_of(service, policy_id, rule_type)):
        raise Conflict(f"Rule {rule_type} already exists in QoS Policy {policy_id}.",
                       "QoSRulesConflict")  # fmt: skip
    return service.store.insert("qos_rules", {
        "id": new_id(), "qos_policy_id": policy_id, "type": rule_type, "direction": direction,
        amount_key: amount,
    })  # fmt: skip


def update_rule(
    service: NetworkService, caller: Caller, policy_id: str, rule_type: str, ident: str,
    ref: Mapping[str, Any],
) -> Row:  # fmt: skip
    _owned_policy(service, caller, policy_id)
    get_rule(service, caller, policy_id, rule_type, ident)
    amount_key = RULE_TYPES[rule_type]
    values = {k: ref[k] for k in (amount_key,) if k in ref}
    return service._updated("qos_rules", ident, values)


def delete_rule(
    service: NetworkService, caller: Caller, policy_id: str, rule_type: str, ident: str
) -> None:
    _owned_policy(service, caller, policy_id)
    get_rule(service, caller, policy_id, rule_type, ident)
    service.store.delete("qos_rules", ident)


# -- qos_policy_id of networks and ports ------------------------------------------------------


def policy_of(service: NetworkService, resource_id: str) -> str | None:
    row = service.store.get("qos_bindings", resource_id)
    return None if row is None else str(row["qos_policy_id"])


def attach(service: NetworkService, caller: Caller, resource_id: str, ref: Mapping[str, Any]) -> None:  # fmt: skip
    """Apply ``qos_policy_id`` of a network or port create/update (None detaches)."""
    if "qos_policy_id" not in ref:
        return
    wanted = ref["qos_policy_id"]
    service.store.delete("qos_bindings", resource_id)
    if wanted:
        get_policy(service, caller, str(wanted))
        service.store.insert("qos_bindings", {"id": resource_id, "qos_policy_id": str(wanted)})


def detach(service: NetworkService, resource_id: str) -> None:
    service.store.delete("qos_bindings", resource_id)


def physnet(network: Row) -> str | None:
    """The embedded network's physnet (its flat networks are on ``public``)."""
    return "public" if network["network_type"] == "flat" else None


def resource_request(service: NetworkService, port: Row) -> dict[str, Any] | None:
    """The port's ``resource_request`` (extended form), None when it asks for nothing."""
    policy_id = policy_of(service, port["id"])
    if policy_id is None and not str(port["device_owner"]).startswith("network:"):
        policy_id = policy_of(service, port["network_id"])
    if policy_id is None:
        return None
    vnic = rr.trait_name("VNIC_TYPE", str(port["binding_vnic_type"] or "normal"))
    groups: list[dict[str, Any]] = []
    bandwidth = {
        (rr.NET_BW_EGR if r["direction"] == "egress" else rr.NET_BW_IGR): int(r["min_kbps"])
        for r in rules_of(service, policy_id, "minimum_bandwidth")
        if r["min_kbps"]
    }
    network = service.store.get("networks", port["network_id"])
    net_physnet = physnet(network) if network is not None else None
    if bandwidth and net_physnet:
        groups.append({
            "id": str(uuid.uuid5(uuid.UUID(port["id"]), "min_bw")),
            "required": [rr.trait_name("PHYSNET", net_physnet), vnic], "resources": bandwidth,
        })  # fmt: skip
    kinds = {"egress": rr.NET_PACKET_RATE_EGR, "ingress": rr.NET_PACKET_RATE_IGR,
             "any": rr.NET_PACKET_RATE}  # fmt: skip
    packets = {
        kinds[r["direction"]]: int(r["min_kpps"])
        for r in rules_of(service, policy_id, "minimum_packet_rate")
        if r["min_kpps"]
    }
    if packets:
        groups.append({
            "id": str(uuid.uuid5(uuid.UUID(port["id"]), "min_pps")),
            "required": [vnic], "resources": packets,
        })  # fmt: skip
    if not groups:
        return None
    return {"request_groups": groups, "same_subtree": [g["id"] for g in groups]}


# -- the network API's verbs of networks and ports, with their qos_policy_id -----------------

Create = Callable[[NetworkService, Caller, dict[str, Any]], Row]
Update = Callable[[NetworkService, Caller, str, dict[str, Any]], Row]
Delete = Callable[[NetworkService, Caller, str], None]


def creating(create: Create) -> Create:
    def with_policy(service: NetworkService, caller: Caller, ref: dict[str, Any]) -> Row:
        if ref.get("qos_policy_id"):
            get_policy(service, caller, str(ref["qos_policy_id"]))
        row = create(service, caller, ref)
        attach(service, caller, row["id"], ref)
        return row

    return with_policy


def updating(update: Update) -> Update:
    def with_policy(service: NetworkService, caller: Caller, ident: str, ref: dict[str, Any]) -> Row:  # fmt: skip
        row = update(service, caller, ident, ref)
        attach(service, caller, ident, ref)
        return row

    return with_policy


def deleting(delete: Delete) -> Delete:
    def with_policy(service: NetworkService, caller: Caller, ident: str) -> None:
        delete(service, caller, ident)
        detach(service, ident)

    return with_policy
