"""Routes of the ``addFixedIp`` / ``removeFixedIp`` server actions (Nova's multinic, 2.1-2.43;
404 from 2.44), with Nova 34.0.0's request schemas written out."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.servers import schema_types as t
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.usecases.fixed_ips import POLICY, ServerFixedIps
from openkeel.api.validation import Versioned


def _action(key: str, fields: dict[str, Any], required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "object",
                "properties": fields,
                "required": [required],
                "additionalProperties": False,
            }
        },
        "required": [key],
        "additionalProperties": False,
    }


# networkId: a string or a number, 1 to 36 long (the nova-network column it once named).
ADD = _action("addFixedIp", {"networkId": {"type": ["string", "number"], "minLength": 1,
                                           "maxLength": 36}}, "networkId")  # fmt: skip
REMOVE = _action("removeFixedIp", {"address": t.IP_ADDRESS}, "address")


def add_fixed_ip(req: ApiRequest) -> None:
    network_id = str(req.body["addFixedIp"]["networkId"])
    ServerFixedIps(req.services, req.context).add(req.params["id"], network_id)


def remove_fixed_ip(req: ApiRequest) -> None:
    address = req.body["removeFixedIp"]["address"]
    ServerFixedIps(req.services, req.context).remove(req.params["id"], address)


def register(table: RouteTable) -> None:
    action = "/servers/{id}/action"
    table.add_action(action, "addFixedIp", endpoint(add_fixed_ip, status=202, until="2.43",
                                                    body=Versioned.of(("2.1", ADD)),
                                                    policy=POLICY % "add"))  # fmt: skip
    table.add_action(action, "removeFixedIp", endpoint(remove_fixed_ip, status=202, until="2.43",
                                                       body=Versioned.of(("2.1", REMOVE)),
                                                       policy=POLICY % "remove"))  # fmt: skip
