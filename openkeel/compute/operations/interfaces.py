"""attach_interface and detach_interface on the compute host (Nova's, with their
``compute_attach_interface`` / ``compute_detach_interface`` events).

Attach (an RPC call: the API answers with the port): the network adapter makes or binds the
port, the driver plugs it into the guest, the instance's network info gains its VIF. A driver
failure gives the port back (deleted if made here, unbound if the user's) and is Nova's
InterfaceAttachFailed; a driver without hot-plug is a 400 (AttachInterfaceNotSupported).
Detach (a cast): the driver unplugs the port, the adapter releases it, the VIF leaves the
network info. A port with a resource request (QoS) first gets its resources added to the
server's allocation on its node (none fits: 400), and gives them back at detach (decision
0076). Both hold the instance lock, as every operation on one instance does.
"""

from __future__ import annotations

import dataclasses
import logging

from openkeel.clients.placement_models import Allocations
from openkeel.compute import guest, notifying, port_resources
from openkeel.compute.host import ComputeHost
from openkeel.domain.errors import ComputeError, Conflict, Invalid, NotFound
from openkeel.domain.instances import InstanceUpdate
from openkeel.network import errors as net_errors
from openkeel.network.adapter import RequestedNetwork
from openkeel.rpc.message import CallContext
from openkeel.virt.errors import NotSupported

LOG = logging.getLogger(__name__)


def _crossing(exc: BaseException) -> BaseException:
    """The domain error a network adapter error crosses RPC as (the API knows only those):
    unknown network or port 404, port or address taken 409, anything else refused 400."""
    if isinstance(exc, net_errors.NetworkNotFound | net_errors.PortNotFound):
        return NotFound(exc.message)
    if isinstance(exc, Conflict):
        return Conflict(exc.message)
    if isinstance(exc, net_errors.FixedIpAlreadyInUse):
        return Conflict(exc.message)
    if isinstance(exc, net_errors.NetworkError):
        return Invalid(exc.message)
    return exc


def attach_interface(
    host: ComputeHost,
    context: CallContext,
    uuid: str,
    requested: RequestedNetwork,
) -> str:
    """Plug a port into the guest; its id."""
    event = "compute_attach_interface"
    with host.locks.hold(uuid):
        instance = host.records.get(uuid)
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event)
        ref = host.net_ref(uuid, instance.project_id)
        failure: BaseException | None = None
        claimed: Allocations = {}
        try:
            try:
                mapping, claimed = port_resources.claim_for_attach(host, instance, requested)
                ref = dataclasses.replace(ref, provider_mapping=mapping)
                vif = host.network.attach_port(ref, requested)
            except ComputeError as exc:
                port_resources.give_back(host, uuid, claimed)
                raise _crossing(exc) from exc
            try:
                host.driver.attach_interface(
                    guest.instance_ref(host.conf, instance), guest.interfaces([vif])[0]
                )
            except BaseException as exc:
                host.network.release_port(ref, str(vif["id"]))
                port_resources.give_back(host, uuid, claimed)
                if isinstance(exc, NotSupported):
                    message = f"Attaching interfaces is not supported for instance {uuid}."
                    raise Invalid(message) from exc
                LOG.exception("attaching port %s to %s failed", vif["id"], uuid)
                # Nova's InterfaceAttachFailed: a 500 with its message.
                raise ComputeError(f"Failed to attach network adapter device to {uuid}") from exc
            host.records.update(
                uuid, InstanceUpdate(network_info=host.network.get_instance_nw_info(ref))
            )
            return str(vif["id"])
        except BaseException as exc:
            failure = exc
            raise
        finally:
            notifying.finished(host, context, uuid, event, failure)
            host.records.event_finish(uuid, context.request_id, event, failure)


def detach_interface(host: ComputeHost, context: CallContext, uuid: str, port_id: str) -> None:
    """Unplug the port and give it back."""
    event = "compute_detach_interface"
    with host.locks.hold(uuid):
        try:
            instance = host.records.get(uuid)
        except NotFound:
            LOG.info("Instance %s disappeared before detach_interface", uuid)
            return
        host.records.event_start(uuid, context.request_id, event, host.host)
        notifying.started(host, context, uuid, event)
        failure: BaseException | None = None
        ref = host.net_ref(uuid, instance.project_id)
        try:
            host.driver.detach_interface(guest.instance_ref(host.conf, instance), port_id)
            held = port_resources.held_by_port(host, uuid, port_id)
            host.network.release_port(ref, port_id)
            port_resources.give_back(host, uuid, held)
            host.records.update(
                uuid, InstanceUpdate(network_info=host.network.get_instance_nw_info(ref))
            )
        except Exception as exc:
            LOG.exception("detaching port %s from %s failed", port_id, uuid)
            failure = exc
        notifying.finished(host, context, uuid, event, failure)
        host.records.event_finish(uuid, context.request_id, event, failure)
