"""The resource tracker: this host's compute node record and its Placement provider.

``ResourceTracker.update_available_resource()`` (at service start and periodically) asks the
driver for each node's totals and inventory, adds the usage of the instances on the node (cell
DB), writes the ``compute_nodes`` row and makes the Placement provider (uuid = compute node
uuid) carry the same inventories and traits (resource classes with a total of 0 left out).
Allocation ratios and reserved amounts come from Nova's ``[DEFAULT]`` options
(``*_allocation_ratio`` falling back to ``initial_*``). One node failing never stops the audit of
the others nor the service: it is logged and retried by the next audit.
"""

from __future__ import annotations

import json
import logging
import uuid as uuidlib
from dataclasses import dataclass

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.clients.placement import PlacementClient
from openkeel.clients.placement_models import Inventory as PlacementInventory
from openkeel.compute import node_records
from openkeel.domain.resource_requests import NET_BW_EGR, NET_BW_IGR, parse_bandwidth_inventory
from openkeel.virt.driver import ComputeDriver
from openkeel.virt.model import HostResources, InventoryPolicy, NodeInventory

LOG = logging.getLogger(__name__)


def inventory_policy(conf: cfg.ConfigOpts) -> InventoryPolicy:
    """Ratios and reserved amounts from configuration, as Nova reads them."""

    def ratio(name: str) -> float:
        value = getattr(conf, f"{name}_allocation_ratio")
        return float(
            value if value is not None else getattr(conf, f"initial_{name}_allocation_ratio")
        )

    return InventoryPolicy(
        cpu_allocation_ratio=ratio("cpu"),
        ram_allocation_ratio=ratio("ram"),
        disk_allocation_ratio=ratio("disk"),
        reserved_host_cpus=conf.reserved_host_cpus,
        reserved_host_memory_mb=conf.reserved_host_memory_mb,
        reserved_host_disk_mb=conf.reserved_host_disk_mb,
    )


@dataclass(frozen=True)
class NodeState:
    """What the tracker knows about one node after an update."""

    nodename: str
    id: int
    uuid: str


class ResourceTracker:
    """Keeps compute_nodes and Placement in line with the driver and the instances."""

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        host: str,
        driver: ComputeDriver,
        placement: PlacementClient,
        cell_db: sa.Engine,
    ) -> None:
        self.conf = conf
        self.host = host
        self.driver = driver
        self.placement = placement
        self.cell_db = cell_db
        self.nodes: dict[str, NodeState] = {}

    def update_available_resource(self, service_id: int | None = None) -> list[NodeState]:
        """Audit every node of the driver (Nova's periodic ``update_available_resource``).

        A node that fails (Placement refusing its inventory, the driver failing to describe
        it) is logged and left for the next audit; the other nodes and the service go on, as
        in Nova's ``_update_available_resource_for_node``. Returns the nodes fully reported.
        """
        policy = inventory_policy(self.conf)
        states = []
        for nodename in self.driver.get_available_nodes(refresh=True):
            try:
                states.append(self._update_node(nodename, policy, service_id))
            except Exception:
                LOG.exception("Error updating resources for node %s; next audit retries", nodename)
        return states

    def _update_node(
        self, nodename: str, policy: InventoryPolicy, service_id: int | None
    ) -> NodeState:
        resources = self.driver.get_available_resource(nodename)
        state = self._save_node(resources, policy, service_id)
        self.nodes[nodename] = state
        self._report_to_placement(state, self.driver.get_inventory(nodename, policy))
        return state

    def provider_uuids(self) -> list[str]:
        """Placement providers of this host's nodes (known after the first update)."""
        return [state.uuid for state in self.nodes.values()]

    def node_for(self, nodename: str | None) -> NodeState | None:
        if nodename is None and len(self.nodes) == 1:
            return next(iter(self.nodes.values()))
        return self.nodes.get(nodename or "")

    def _save_node(
        self, res: HostResources, policy: InventoryPolicy, service_id: int | None
    ) -> NodeState:
        with self.cell_db.begin() as conn:
            usage = node_records.node_usage(conn, self.host, res.nodename)
            existing = node_records.find_node(conn, self.host, res.nodename)
            memory_used = policy.reserved_host_memory_mb + usage.memory_mb
            disk_used = policy.reserved_host_disk_mb // 1024 + usage.local_gb
            values = {
                "host": self.host,
                "hypervisor_hostname": res.hypervisor_hostname,
                "vcpus": res.vcpus,
                "memory_mb": res.memory_mb,
                "local_gb": res.local_gb,
                "vcpus_used": policy.reserved_host_cpus + usage.vcpus,
                "memory_mb_used": memory_used,
                "local_gb_used": disk_used,
                "free_ram_mb": res.memory_mb - memory_used,
                "free_disk_gb": res.local_gb - disk_used,
                "current_workload": usage.workload,
                "running_vms": usage.running_vms,
                "hypervisor_type": res.hypervisor_type,
                "hypervisor_version": res.hypervisor_version,
                "cpu_info": res.cpu_info,
                "supported_instances": json.dumps([list(t) for t in res.supported_instances]),
                "disk_available_least": res.disk_available_least or res.local_gb - disk_used,
                "host_ip": self.conf.my_ip,
                "cpu_allocation_ratio": policy.cpu_allocation_ratio,
                "ram_allocation_ratio": policy.ram_allocation_ratio,
                "disk_allocation_ratio": policy.disk_allocation_ratio,
                "stats": "{}",
            }
            if service_id is not None:
                values["service_id"] = service_id
            if existing is None:
                values["uuid"] = str(uuidlib.uuid4())
                values["mapped"] = 0
            node_id = node_records.save_node(conn, existing["id"] if existing else None, values)
            node_uuid = existing["uuid"] if existing else values["uuid"]
        return NodeState(res.nodename, node_id, str(node_uuid))

    def _report_to_placement(self, state: NodeState, inventory: NodeInventory) -> None:
        self.placement.ensure_provider(state.uuid, state.nodename)
        wanted = {
            rc: PlacementInventory(
                total=inv.total,
                reserved=inv.reserved,
                min_unit=inv.min_unit,
                max_unit=inv.max_unit,
                step_size=inv.step_size,
                allocation_ratio=inv.allocation_ratio,
            )
            for rc, inv in inventory.inventories.items()
            # Placement refuses a total of 0 (minimum 1); Nova's drivers leave such classes
            # out (a Kubernetes Node without ephemeral-storage has no DISK_GB to offer).
            if inv.total > 0
        }
        self._sync_provider(state.uuid, wanted, set(inventory.traits))
        self._report_bandwidth(state)

    def _sync_provider(
        self, uuid: str, wanted: dict[str, PlacementInventory], traits: set[str]
    ) -> None:
        if self.placement.get_inventories(uuid) != wanted:
            self.placement.set_inventories(uuid, wanted)
        if self.placement.get_traits(uuid) != traits:
            self.placement.set_traits(uuid, traits)

    def _report_bandwidth(self, state: NodeState) -> None:
        """The node's bandwidth providers of ``[openkeel_network] bandwidth_inventories``:
        child providers as Neutron's agents report them (decision 0076)."""
        for text in self.conf.openkeel_network.bandwidth_inventories:
            item = parse_bandwidth_inventory(text)
            if not item.serves(self.host):
                continue
            uuid = str(uuidlib.uuid5(uuidlib.UUID(state.uuid), f"bandwidth:{item.physnet}"))
            name = f"{state.nodename}:OpenKeel bandwidth:{item.physnet}"
            self.placement.ensure_provider(uuid, name, parent_uuid=state.uuid)
            amounts = {NET_BW_EGR: item.egress_kbps, NET_BW_IGR: item.ingress_kbps}
            wanted = {
                rc: PlacementInventory(total=n, max_unit=n) for rc, n in amounts.items() if n > 0
            }
            self._sync_provider(uuid, wanted, set(item.traits()))
