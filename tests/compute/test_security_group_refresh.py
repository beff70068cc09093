"""The compute host hands a driver that enforces security groups itself (KubeVirt's
NetworkPolicies, decision 0077) the groups of the server's ports: before the spawn, on the
refresh_instance_security_rules cast and in the periodic pass; never to one that does not."""

from __future__ import annotations

from collections.abc import Sequence

from openkeel.compute import security_groups
from openkeel.compute.operations.build import build_and_run
from openkeel.compute.operations.rebuild import rebuild
from openkeel.compute.service import ComputeService
from openkeel.domain.instances import InstanceUpdate
from openkeel.domain.states import TaskState
from openkeel.rpc.clients.compute import ComputeRpcClient
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import (
    BuildAndRunInstance,
    RebuildInstance,
    RefreshInstanceSecurityRules,
)
from openkeel.virt.model import InstanceRef, NetworkInterface, PortSecurity
from tests.compute.cloud import Cloud, wait_for

CTX = CallContext(user_id="demo", project_id="demo", request_id="req-1")

Seen = list[tuple[str, tuple[str, ...], PortSecurity, bool]]


def _enforcing(compute: ComputeService) -> Seen:
    """Make the fake driver enforce the groups; what it is handed: (server, ports, groups,
    whether the guest existed then)."""
    driver, seen = compute.host.driver, []

    def refresh(instance: InstanceRef, network: Sequence[NetworkInterface], security: PortSecurity) -> None:  # fmt: skip
        seen.append((instance.uuid, tuple(p.port_id for p in network), security, driver.instance_exists(instance)))  # fmt: skip

    driver.enforces_security_groups = True
    driver.refresh_security_groups = refresh  # type: ignore[method-assign]
    return seen


def test_the_groups_reach_the_driver_before_the_spawn_and_on_refreshes(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    seen = _enforcing(compute)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    built = cloud.cell1.get(instance.uuid)
    (vif,) = built.network_info
    [(uuid, ports, security, existed)] = seen
    assert (uuid, ports, existed) == (instance.uuid, (vif["id"],), False)
    [default] = security.groups.values()
    assert default["name"] == "default"
    assert security.ports == {vif["id"]: (default["id"],)}
    # the default group lets its members in: they are resolved
    assert security.members == {str(default["id"]): (instance.uuid,)}
    ComputeRpcClient(cloud.transport).cast(CTX, compute.hostname, RefreshInstanceSecurityRules(instance.uuid))  # fmt: skip
    wait_for(lambda: len(seen) == 2)
    assert seen[1][:3] == (instance.uuid, ports, security) and seen[1][3]
    security_groups.refresh_all(compute.host)
    assert len(seen) == 3 and seen[2][:3] == seen[1][:3]


def test_a_driver_that_does_not_enforce_them_is_never_asked(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    assert not compute.host.driver.enforces_security_groups
    assert compute.host.driver.security_group_refresh_interval < 0
    asked: list[str] = []
    compute.host.network.port_security_groups = asked.append  # type: ignore[method-assign,assignment]
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    security_groups.refresh_all(compute.host)
    security_groups.refresh_one(compute.host, instance.uuid)
    assert asked == [] and cloud.cell1.get(instance.uuid).vm_state == "active"


def test_a_rebuild_writes_them_again_before_its_spawn_and_a_busy_server_is_skipped(cloud: Cloud) -> None:  # fmt: skip
    """The rebuild's destroy removed what the driver wrote: written again before the new
    guest exists. The periodic pass leaves a server with a task alone (a delete under way
    would see its policies written back)."""
    compute = cloud.compute().start(background=False)
    seen = _enforcing(compute)
    instance = cloud.instance(compute)
    build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
    cloud.cell1.update(instance.uuid, InstanceUpdate(task_state=TaskState.REBUILDING.value))
    security_groups.refresh_all(compute.host)
    assert len(seen) == 1
    rebuild(compute.host, CTX, RebuildInstance(instance.uuid, image_ref="img-1"))
    assert cloud.cell1.get(instance.uuid).vm_state == "active"
    assert len(seen) == 2 and seen[1][0] == instance.uuid and not seen[1][3]
