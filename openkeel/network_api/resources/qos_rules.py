"""QoS rules under their policy (decision 0076): ``/v2.0/qos/policies/{policy_id}/
minimum_bandwidth_rules`` and ``minimum_packet_rate_rules``, Neutron's verbs."""

from __future__ import annotations

from collections.abc import Callable

from openkeel.network.embedded import qos
from openkeel.network_api import views
from openkeel.network_api.request import Check, NetworkRequest, Reply, anything, string
from openkeel.network_api.routing import Endpoint, RouteTable

_ATTRS: dict[str, dict[str, Check]] = {
    "minimum_bandwidth": {"min_kbps": anything, "direction": string(16)},
    "minimum_packet_rate": {"min_kpps": anything, "direction": string(16)},
}


def _handlers(rule_type: str) -> dict[str, Callable[[NetworkRequest], Reply]]:
    singular = f"{rule_type}_rule"

    def list_(req: NetworkRequest) -> Reply:
        qos.get_policy(req.service, req.caller, req.params["policy_id"])
        rows = qos.rules_of(req.service, req.params["policy_id"], rule_type)
        return Reply({f"{singular}s": [views.qos_rule(r) for r in rows]})

    def show(req: NetworkRequest) -> Reply:
        row = qos.get_rule(req.service, req.caller, req.params["policy_id"], rule_type,
                           req.params["id"])  # fmt: skip
        return Reply({singular: views.qos_rule(row)})

    def create(req: NetworkRequest) -> Reply:
        ref = req.resource(singular, _ATTRS[rule_type], (qos.RULE_TYPES[rule_type],))
        row = qos.create_rule(req.service, req.caller, req.params["policy_id"], rule_type, ref)
        return Reply({singular: views.qos_rule(row)}, 201)

    def update(req: NetworkRequest) -> Reply:
        ref = req.resource(singular, _ATTRS[rule_type])
        row = qos.update_rule(req.service, req.caller, req.params["policy_id"], rule_type,
                              req.params["id"], ref)  # fmt: skip
        return Reply({singular: views.qos_rule(row)})

    def delete(req: NetworkRequest) -> Reply:
        qos.delete_rule(req.service, req.caller, req.params["policy_id"], rule_type,
                        req.params["id"])  # fmt: skip
        return Reply(None, 204)

    return {"list": list_, "show": show, "create": create, "update": update, "delete": delete}


def register(table: RouteTable) -> None:
    for rule_type in qos.RULE_TYPES:
        verbs = _handlers(rule_type)
        url = f"/v2.0/qos/policies/{{policy_id}}/{rule_type}_rules"
        table.add("GET", url, Endpoint(verbs["list"]))
        table.add("POST", url, Endpoint(verbs["create"]))
        table.add("GET", url + "/{id}", Endpoint(verbs["show"]))
        table.add("PUT", url + "/{id}", Endpoint(verbs["update"]))
        table.add("DELETE", url + "/{id}", Endpoint(verbs["delete"]))
