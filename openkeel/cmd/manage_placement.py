"""``openkeel manage placement`` (nova-manage's): heal_allocations, audit, sync_aggregates.

They read the API and cell databases (``openkeel.db.allocation_owners``) and talk to the
Placement of ``[placement] endpoint_override`` / ``token``. Exit codes are nova-manage's.
OpenKeel's ports carry no resource requests, so heal_allocations has no port work (its
``--skip-port-allocations`` is accepted and changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
from oslo_config import cfg

from openkeel.clients import placement_errors as perr
from openkeel.clients.placement import PlacementClient
from openkeel.cmd.manage_cli import action, api_engine, arg, option
from openkeel.db import allocation_owners as owners
from openkeel.db import cell_admin, cells
from openkeel.domain.instances import Instance
from openkeel.scheduler.placement_query import flavor_resources
from openkeel.scheduler.request import FlavorRequest, SchedulingRequest

HEAL_BATCH = 50
# The resource classes Nova allocates for instances (the audit looks only at those).
NOVA_RESOURCE_CLASSES = frozenset(
    ("VCPU", "MEMORY_MB", "DISK_GB", "VGPU", "NET_BW_EGR_KILOBIT_PER_SEC",
     "NET_BW_IGR_KILOBIT_PER_SEC", "PCPU", "MEM_ENCRYPTION_CONTEXT")
)  # fmt: skip
Say = Callable[[str], None]


def add_actions(actions: Any) -> None:
    """Declare the actions on the ``placement`` category's sub-parsers."""
    heal = action(actions, "heal_allocations", _heal_allocations,
                  "Create or update instances' missing allocations in Placement.")  # fmt: skip
    option(heal, "--max-count", dest="max_count", metavar="<max_count>",
           help="Maximum number of instances to process.")  # fmt: skip
    option(heal, "--verbose", dest="verbose", action="store_true", help="Verbose output.")
    option(heal, "--dry-run", dest="dry_run", action="store_true",
           help="Print what would be done, change nothing (exits 4).")  # fmt: skip
    option(heal, "--instance", dest="instance_uuid", metavar="<instance_uuid>",
           help="Only this instance.")  # fmt: skip
    option(heal, "--skip-port-allocations", dest="skip_ports", action="store_true",
           help="Skip port allocations (OpenKeel's ports have none).")  # fmt: skip
    option(heal, "--cell", dest="cell_uuid", metavar="<cell_uuid>", help="Only this cell.")
    option(heal, "--force", dest="force", action="store_true",
           help="Rewrite the allocations of --instance from its flavor.")  # fmt: skip
    audit = action(actions, "audit", _audit, "Find (and delete) orphaned allocations.")
    option(audit, "--verbose", dest="verbose", action="store_true", help="Verbose output.")
    option(audit, "--resource_provider", dest="provider_uuid", metavar="<provider_uuid>",
           help="Only this resource provider.")  # fmt: skip
    option(audit, "--delete", dest="delete", action="store_true",
           help="Delete the orphaned allocations found.")  # fmt: skip
    sync = action(actions, "sync_aggregates", _sync_aggregates,
                  "Mirror host aggregates to resource provider aggregates.")  # fmt: skip
    option(sync, "--verbose", dest="verbose", action="store_true", help="Verbose output.")


def placement_client(conf: cfg.ConfigOpts) -> PlacementClient:
    """A client of ``[placement] endpoint_override`` with ``[placement] token``."""
    endpoint = conf.placement.endpoint_override
    if not endpoint:
        raise perr.PlacementUnavailable("[placement] endpoint_override is not set")
    http = httpx.Client(base_url=endpoint, headers={"X-Auth-Token": conf.placement.token})
    return PlacementClient(http, attempts=1)


def _say(conf: cfg.ConfigOpts) -> Say:
    return print if arg(conf, "verbose") else lambda _: None


class _HealError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _heal_allocations(conf: cfg.ConfigOpts) -> int:
    say = _say(conf)
    instance_uuid, cell_uuid = arg(conf, "instance_uuid"), arg(conf, "cell_uuid")
    if instance_uuid and cell_uuid:
        print("The --cell and --instance options are mutually exclusive.")
        return 127
    if arg(conf, "force") and not instance_uuid:
        print("The --instance flag is required when using --force flag.")
        return 127
    limit = _heal_limit(arg(conf, "max_count"), instance_uuid, say)
    if limit == 127:
        return 127
    with api_engine(conf) as api:
        found = _heal_cells(api, instance_uuid, cell_uuid, say)
        if isinstance(found, int):
            return found
        placement = placement_client(conf)
        try:
            return _heal_each(conf, placement, found, instance_uuid, limit, say)
        finally:
            placement.close()


def _heal_limit(raw: str | None, instance_uuid: str | None, say: Say) -> int | None:
    """How many instances to heal (None: all, in batches); 127 for an invalid --max-count."""
    if instance_uuid:
        return 1
    if raw is None:
        say(f"Running batches of {HEAL_BATCH} until complete")
        return None
    count = int(raw) if str(raw).lstrip("-").isdigit() else -1
    if count < 1:
        print("Must supply a positive integer for --max-count.")
        return 127
    return count


def _heal_cells(
    api: Any, instance_uuid: str | None, cell_uuid: str | None, say: Say
) -> list[cells.CellMapping] | int:
    if instance_uuid:
        _, cell = cell_admin.verify_instance(api, instance_uuid)
        if cell is None:
            print(
                f"Unable to find cell for instance {instance_uuid}, is it mapped? Try running "
                '"nova-manage cell_v2 verify_instance" or "nova-manage cell_v2 map_instances".'
            )
            return 127
        return [cell]
    if cell_uuid:
        try:
            return [cells.get_cell(api, cell_uuid)]
        except cells.CellMappingNotFound:
            print(f"Cell with uuid {cell_uuid} was not found.")
            return 127
    found = cells.list_cells(api)
    if not found:
        say("No cells to process.")
        return 4
    return found


def _heal_each(
    conf: cfg.ConfigOpts,
    placement: PlacementClient,
    found: list[cells.CellMapping],
    instance_uuid: str | None,
    limit: int | None,
    say: Say,
) -> int:
    healed = 0
    for cell in found:
        if cell.is_cell0:
            continue
        say(f"Looking for instances in cell: {_identity(cell)}")
        batch = list(owners.instances_to_check(cell, instance_uuid))
        if batch:
            say(f"Found {len(batch)} candidate instances.")
        for instance in batch:
            try:
                healed += _heal_one(conf, placement, cell, instance, say)
            except _HealError as exc:
                print(exc)
                return exc.code
            if limit is not None and healed == limit and not instance_uuid:
                say(f"Max count reached. Processed {healed} instances.")
                return 1
    say(f"Processed {healed} instances.")
    return 0 if healed else 4


def _heal_one(
    conf: cfg.ConfigOpts,
    placement: PlacementClient,
    cell: cells.CellMapping,
    instance: Instance,
    say: Say,
) -> int:
    """Heal one instance's allocations; 1 when they were written."""
    if instance.task_state is not None:
        say(f"Instance {instance.uuid} is undergoing a task state transition: "
            f"{instance.task_state}")  # fmt: skip
        return 0
    if instance.node is None or instance.host is None:
        say(f"Instance {instance.uuid} is not on a host.")
        return 0
    current = _allocations(placement, instance.uuid)
    wanted: dict[str, Any] | None = None
    verb = "Update"
    if not current.allocations or arg(conf, "force"):
        if arg(conf, "force"):
            say(f"Force flag passed for instance {instance.uuid}")
        verb = "Create" if not current.allocations else "Update"
        wanted = {_node(cell, instance): _resources(instance)}
    elif current.project_id != instance.project_id or current.user_id != instance.user_id:
        wanted = dict(current.allocations)
    if wanted is None:
        say(f"The allocation of instance {instance.uuid} is up-to-date. Nothing to be healed.")
        return 0
    payload = {
        "allocations": {rp: {"resources": res} for rp, res in wanted.items()},
        "project_id": instance.project_id,
        "user_id": instance.user_id,
        "consumer_generation": current.generation,
    }
    if arg(conf, "dry_run"):
        say(f"[dry-run] {verb} allocations for instance {instance.uuid}: {json.dumps(payload)}")
        return 0
    try:
        placement.claim(instance.uuid, wanted, project_id=instance.project_id,
                        user_id=instance.user_id or "", consumer_generation=current.generation)  # fmt: skip
    except perr.PlacementError as exc:
        raise _HealError(f"Failed to update allocations for consumer {instance.uuid}. "
                         f"Error: {exc}", 3) from exc  # fmt: skip
    say(f"Successfully {verb.lower()}d allocations for instance {instance.uuid}.")
    return 1


def _allocations(placement: PlacementClient, uuid: str) -> Any:
    try:
        return placement.get_allocations(uuid)
    except perr.PlacementError as exc:
        raise _HealError(f"Failed to update allocations for consumer {uuid}. Error: "
                         f"Allocation retrieval failed: {exc}", 3) from exc  # fmt: skip


def _node(cell: cells.CellMapping, instance: Instance) -> str:
    uuid = owners.node_uuid(cell, instance.host or "", instance.node or "")
    if uuid is None:
        raise _HealError(f"Compute host {instance.node} could not be found.", 2)
    return uuid


def _resources(instance: Instance) -> dict[str, int]:
    flavor = instance.flavor
    request = FlavorRequest(
        vcpus=flavor.vcpus, memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb, swap=flavor.swap, extra_specs=flavor.extra_specs,
    )  # fmt: skip
    return flavor_resources(SchedulingRequest(flavor=request, is_bfv=not instance.image_ref))


def _identity(cell: cells.CellMapping) -> str:
    return f"{cell.uuid}({cell.name})" if cell.name else cell.uuid


def _audit(conf: cfg.ConfigOpts) -> int:
    say, delete = _say(conf), arg(conf, "delete")
    placement = placement_client(conf)
    try:
        provider_uuid = arg(conf, "provider_uuid")
        if provider_uuid:
            try:
                providers = [placement.get_provider(provider_uuid)]
            except perr.PlacementNotFound:
                print(f"Resource provider with UUID {provider_uuid} does not exist.")
                return 127
        else:
            providers = placement.list_providers()
        found = 0
        with api_engine(conf) as api:
            for provider in providers:
                orphans, faults = _audit_provider(api, placement, provider, delete, say)
                found += orphans
                if faults:
                    print(f"The Resource Provider {provider.uuid} had problems when deleting "
                          "allocations. Stopping now. Please fix the problem by hand and run "
                          "again.")  # fmt: skip
                    return 1
    finally:
        placement.close()
    if found:
        say(f"Processed {found} allocation{'s.' if found > 1 else '.'}")
        return 4 if delete else 3
    return 0


def _audit_provider(
    api: Any, placement: PlacementClient, provider: Any, delete: bool, say: Say
) -> tuple[int, int]:
    root = provider.root_provider_uuid or provider.uuid
    consumers = owners.node_consumers(api, root)
    if consumers is None:
        say(f"The compute node for UUID {root} can not be found")
        consumers = owners.NodeConsumers(frozenset(), frozenset())
    orphans = faults = 0
    for consumer, resources in placement.get_provider_allocations(provider.uuid).items():
        if not NOVA_RESOURCE_CLASSES & set(resources):
            continue
        if consumer in consumers.instances or consumer in consumers.migrations:
            continue
        say(f"Allocations were set against consumer UUID {consumer} but no existing "
            "instances or active migrations are related. ")  # fmt: skip
        if delete:
            if not _drop(placement, consumer, provider.uuid):
                print(f"Not able to delete allocations for consumer UUID {consumer}")
                faults += 1
                continue
            say(f"Deleted allocations for consumer UUID {consumer} on Resource Provider "
                f"{provider.uuid}: {resources}")  # fmt: skip
        else:
            say(f"Allocations for consumer UUID {consumer} on Resource Provider "
                f"{provider.uuid} can be deleted: {resources}")  # fmt: skip
        orphans += 1
    return orphans, faults


def _drop(placement: PlacementClient, consumer: str, provider_uuid: str) -> bool:
    """Remove ``consumer``'s allocations on one provider (all of them when it is the only)."""
    try:
        current = placement.get_allocations(consumer)
        if len(current.allocations) > 1:
            rest = {rp: res for rp, res in current.allocations.items() if rp != provider_uuid}
            placement.claim(consumer, rest, project_id=current.project_id or "",
                            user_id=current.user_id or "",
                            consumer_generation=current.generation)  # fmt: skip
            return True
        placement.delete_allocations(consumer, force=True)
    except perr.PlacementError:
        return False
    return True


def _sync_aggregates(conf: cfg.ConfigOpts) -> int:
    say = _say(conf)
    say("Filling in missing placement aggregates")
    unmapped: set[str] = set()
    no_node: set[str] = set()
    no_provider: dict[str, str] = {}
    node_of: dict[str, str] = {}
    placement = placement_client(conf)
    try:
        with api_engine(conf) as api:
            for aggregate in owners.aggregates(api):
                say(f"Processing aggregate: {aggregate.name}")
                for host in aggregate.hosts:
                    say(f"Processing host: {host}")
                    if host not in node_of:
                        try:
                            node_of[host] = owners.host_node_uuid(api, host)
                        except cell_admin.HostMappingNotFound:
                            unmapped.add(host)
                            continue
                        except owners.ComputeHostNotFound:
                            no_node.add(host)
                            continue
                        except owners.TooManyComputesForHost as exc:
                            print(exc)
                            return 1
                    code = _add_to_aggregate(placement, host, node_of[host], aggregate.uuid,
                                             no_provider, say)  # fmt: skip
                    if code:
                        return code
    finally:
        placement.close()
    return _sync_report(unmapped, no_node, no_provider)


def _add_to_aggregate(
    placement: PlacementClient,
    host: str,
    provider: str,
    aggregate: str,
    missing: dict[str, str],
    say: Say,
) -> int:
    try:
        current = placement.get_aggregates(provider)
        if aggregate not in current:
            placement.set_aggregates(provider, current | {aggregate})
    except perr.PlacementNotFound:  # the provider is gone
        missing[host] = provider
        return 0
    except perr.PlacementError as exc:
        print(f"Failed updating provider aggregates for host ({host}), provider ({provider}) "
              f"and aggregate ({aggregate}). Error: {exc}")  # fmt: skip
        return 3
    say(f"Successfully added host ({host}) and provider ({provider}) to aggregate ({aggregate}).")
    return 0


def _sync_report(unmapped: set[str], no_node: set[str], no_provider: dict[str, str]) -> int:
    code = 0
    if unmapped:
        print("The following hosts were found in nova host aggregates but no host mappings "
              'were found in the nova API DB. Run "nova-manage cell_v2 discover_hosts" and '
              f"then retry. Missing: {','.join(sorted(unmapped))}")  # fmt: skip
        code = 4
    if no_node:
        print("Unable to find matching compute_nodes record entries in the cell database for "
              "the following hosts; does the nova-compute service on each host need to be "
              f"restarted? Missing: {','.join(sorted(no_node))}")  # fmt: skip
        code = 5
    if no_provider:
        pairs = ",".join(f"{h} ({no_provider[h]})" for h in sorted(no_provider))
        print("Unable to find matching resource provider record in placement with uuid for "
              f"the following hosts: {pairs}. Try restarting the nova-compute service on each "
              "host and then retry.")  # fmt: skip
        code = 6
    return code
