"""A compute host's drivers that enforce security groups themselves (KubeVirt's
NetworkPolicies, decision 0077) learn the groups of the server's ports here.

Nova leaves security groups to Neutron (its agents filter the ports; the compute host is not
told of rule or group changes). A KubeVirt guest's traffic is filtered by the cluster, so the
compute host hands the driver the groups (``refresh``): before the first spawn, on
``refresh_instance_security_rules`` (the cast the API sends after ``addSecurityGroup`` /
``removeSecurityGroup``, Nova's compute RPC method of that name) and every
``driver.security_group_refresh_interval`` seconds for each server of the host (rule changes
and the members of remote groups, which no one announces).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import Instance, InstanceNotFound
from openkeel.domain.states import VmState
from openkeel.virt.model import PortSecurity

LOG = logging.getLogger(__name__)


def port_security(host: ComputeHost, uuid: str) -> PortSecurity:
    """The groups of the server's ports and the members of the remote groups they name."""
    found = host.network.port_security_groups(uuid)
    groups = found.get("groups") or {}
    remote = sorted({str(rule["remote_group_id"]) for group in groups.values()
                     for rule in group.get("security_group_rules") or ()
                     if rule.get("remote_group_id")})  # fmt: skip
    return PortSecurity(
        ports={p: tuple(ids) for p, ids in (found.get("ports") or {}).items()},
        groups=groups,
        members={g: tuple(host.network.security_group_members(g)) for g in remote},
    )


def refresh(host: ComputeHost, instance: Instance, network_info: Sequence[Mapping[str, Any]]) -> None:  # fmt: skip
    """Hand the driver the server's groups, with the server's ports (``network_info``).
    Nothing for a driver that does not enforce them."""
    if not host.driver.enforces_security_groups:
        return
    ref = guest.instance_ref(host.conf, instance)
    host.driver.refresh_security_groups(ref, guest.interfaces(network_info), port_security(host, instance.uuid))  # fmt: skip


def refresh_one(host: ComputeHost, uuid: str) -> None:
    """``refresh_instance_security_rules``: one server, now, unless an operation is under way
    (the periodic pass takes it after that)."""
    with host.locks.hold(uuid), contextlib.suppress(InstanceNotFound):  # deleted: nothing to do
        instance = host.records.get(uuid)
        if _idle_here(host, instance):
            refresh(host, instance, instance.network_info)


def refresh_all(host: ComputeHost) -> None:
    """The periodic task: every idle server of the host. Under the instance's lock and only
    without a task (as the power state sync), so a delete or an offload that removed the
    server's policies never has them written back behind it; the operations that spawn
    write them first."""
    for listed in host.records.on_host(host.host):
        if listed.task_state is not None:
            continue
        try:
            refresh_one(host, listed.uuid)
        except Exception:
            LOG.exception("Refreshing the security groups of %s failed", listed.uuid)


def _idle_here(host: ComputeHost, instance: Instance) -> bool:
    return (
        instance.host == host.host
        and instance.task_state is None
        and instance.vm_state not in (VmState.BUILDING.value, VmState.SHELVED_OFFLOADED.value)
    )
