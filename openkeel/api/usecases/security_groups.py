"""A server's security groups (``GET /servers/{id}/os-security-groups``, the
``addSecurityGroup`` / ``removeSecurityGroup`` actions): through the network adapter, as Nova
does through Neutron, in Nova's format."""

from __future__ import annotations

from typing import Any

from openkeel.api.usecases.server_network import ServerNetworkUseCase
from openkeel.api.usecases.servers.create import call_context
from openkeel.api.usecases.servers.lookup import FoundServer
from openkeel.db.repositories import instances
from openkeel.rpc.messages.compute import RefreshInstanceSecurityRules

POLICY = "os_compute_api:os-security-groups:%s"


class ServerSecurityGroups(ServerNetworkUseCase):
    policy = POLICY

    def list(self, server_id: str) -> list[dict[str, Any]]:
        """The groups on the server's ports, formatted and sorted as Nova answers them."""
        inst = self._server(server_id, "list").instance
        groups = self._network.instance_security_groups(inst.uuid)
        names = {g["id"]: {"name": g["name"], "tenant_id": g["project_id"]} for g in groups}
        out = [group_view(g, names) for g in groups]
        return sorted(out, key=lambda g: (g["tenant_id"], g["name"]))

    def add(self, server_id: str, name: str) -> None:
        found = self._server(server_id, "add")
        self._network.add_security_group(found.instance.uuid, str(self._context.project_id), name)
        self._record(found)

    def remove(self, server_id: str, name: str) -> None:
        found = self._server(server_id, "remove")
        self._network.remove_security_group(
            found.instance.uuid, str(self._context.project_id), name
        )
        self._record(found)

    def _record(self, found: FoundServer) -> None:
        """The server's record names the groups its ports now have (the servers view)."""
        if found.cell_uuid is None or found.down:
            return
        groups = self._network.instance_security_groups(found.instance.uuid)
        names = tuple(dict.fromkeys(g["name"] or g["id"] for g in groups))
        with self._services.cell_dbs[found.cell_uuid].begin() as conn:
            instances.set_security_groups(conn, found.instance, names)
        # A host whose driver enforces the groups itself (KubeVirt, decision 0077) refreshes
        # at once; the others ignore it (Neutron's agents filter their ports).
        compute = getattr(self._services, "compute", None)
        if compute is not None and found.instance.host:
            context = call_context(self._context)
            compute.cast(context, found.instance.host, RefreshInstanceSecurityRules(found.instance.uuid))  # fmt: skip


def rule_view(rule: dict[str, Any], source: dict[str, str] | None) -> dict[str, Any]:
    """A rule in Nova's API form; ``source``: the name and project of its remote group."""
    entry: dict[str, Any] = {
        "id": rule["id"], "parent_group_id": rule["parent_group_id"],
        "ip_protocol": rule["protocol"], "from_port": rule["from_port"],
        "to_port": rule["to_port"], "group": {}, "ip_range": {},
    }  # fmt: skip
    if source is not None:
        entry["group"] = source
    else:
        entry["ip_range"] = {"cidr": rule["cidr"]}
    return entry


def group_view(group: dict[str, Any], names: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A group in Nova's API form; ``names``: the groups a rule may name as its source (by id;
    a rule whose source is not there is left out, as Nova does)."""
    rules = []
    for rule in group["rules"]:
        source = names.get(rule["group_id"]) if rule["group_id"] else None
        if rule["group_id"] and source is None:
            continue  # a group the caller cannot see (Nova skips the rule)
        rules.append(rule_view(rule, source))
    return {"id": group["id"], "name": group["name"], "description": group["description"],
            "tenant_id": group["project_id"], "rules": rules}  # fmt: skip
