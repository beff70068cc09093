"""add_fixed_ip_to_instance and remove_fixed_ip_from_instance on the compute host (Nova's, cast
by the ``addFixedIp`` / ``removeFixedIp`` actions of 2.1-2.43).

The network adapter adds an address from the network's subnets to the server's port on it, or
takes the address off the port holding it; the instance's network info (its ``addresses``)
becomes what the adapter then reports. There is nothing to push into the guest (Nova's
inject_network_info is a no-op for its drivers too). As in Nova the API has already answered
202: a failure (no port on that network, no such address) is only recorded as the instance's
fault. Both hold the instance lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.network.adapter import InstanceNetRef, NetworkInfo
from openkeel.rpc.message import CallContext

LOG = logging.getLogger(__name__)


def _change(
    host: ComputeHost, context: CallContext, uuid: str, what: str,
    change: Callable[[InstanceNetRef], NetworkInfo],
) -> None:  # fmt: skip
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except InstanceNotFound:
            LOG.info("Instance %s disappeared before %s", uuid, what)
            return
        try:
            info = change(host.net_ref(uuid, instance.project_id))
        except Exception as exc:
            LOG.warning("%s for %s failed (request %s): %s", what, uuid, context.request_id, exc)
            host.records.add_fault(uuid, exc, host.host)
            return
        host.records.update(uuid, InstanceUpdate(network_info=info))


def add_fixed_ip(host: ComputeHost, context: CallContext, uuid: str, network_id: str) -> None:
    """One more address on the server's port on ``network_id``."""
    _change(host, context, uuid, "add_fixed_ip_to_instance",
            lambda ref: host.network.add_fixed_ip(ref, network_id))  # fmt: skip


def remove_fixed_ip(host: ComputeHost, context: CallContext, uuid: str, address: str) -> None:
    """``address`` off the server's port."""
    _change(host, context, uuid, "remove_fixed_ip_from_instance",
            lambda ref: host.network.remove_fixed_ip(ref, address))  # fmt: skip
