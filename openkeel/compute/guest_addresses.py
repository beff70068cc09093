"""The addresses a hypervisor's own network gave a guest become its ports' fixed IPs.

On KubeVirt a port on the pod network (or on a NetworkAttachmentDefinition with IPAM) gets
its address from the cluster, and a new one with every new pod (a start, a migration, an
evacuation). The driver reports them (``get_guest_addresses``) and announces a change with an
``ADDRESSES_CHANGED`` lifecycle event; :class:`AddressSync` then writes them onto the ports
through the network adapter and refreshes the instance's network info, so what the API shows
is what the guest has. Other drivers report nothing and this does nothing.

Each sync runs on a thread of its own under the instance's lock: an operation in progress
(the build that started the guest) finishes first, and a long one on one server never holds up
another server's addresses. Started by the lifecycle handler; ``stop`` joins what is running.
"""

from __future__ import annotations

import logging
import threading

from openkeel.compute import guest
from openkeel.compute.host import ComputeHost
from openkeel.domain.instances import InstanceNotFound, InstanceUpdate
from openkeel.network.errors import NetworkError

LOG = logging.getLogger(__name__)


def sync(host: ComputeHost, uuid: str) -> bool:
    """Make the instance's ports carry the addresses the driver reports; True if any
    changed. A port the network refuses them for keeps its own (logged)."""
    with host.locks.hold(uuid):
        inst = host.records.get(uuid)
        reported = host.driver.get_guest_addresses(guest.instance_ref(host.conf, inst))
        if not reported:
            return False
        ref = host.net_ref(uuid, inst.project_id)
        changed = False
        for vif in guest.interfaces(host.network.get_instance_nw_info(ref)):
            wanted = reported.get(vif.mac_address.lower())
            if wanted is None or sorted(wanted) == sorted(vif.fixed_ips):
                continue
            try:
                host.network.set_port_addresses(vif.port_id, wanted)
            except NetworkError as exc:
                LOG.error("Port %s of instance %s keeps %s; the guest has %s: %s", vif.port_id,
                          uuid, ", ".join(vif.fixed_ips), ", ".join(wanted), exc)  # fmt: skip
                continue
            LOG.info("Port %s of instance %s now has the guest's %s (was %s)", vif.port_id, uuid,
                     ", ".join(wanted), ", ".join(vif.fixed_ips))  # fmt: skip
            changed = True
        if changed:
            info = host.network.get_instance_nw_info(ref)
            host.records.update(uuid, InstanceUpdate(network_info=info))
        return changed


class AddressSync:
    """One sync thread per server with a change pending (at most one waiting per server)."""

    def __init__(self, host: ComputeHost) -> None:
        self.host = host
        self._lock = threading.Lock()
        self._waiting: set[str] = set()
        self._threads: list[threading.Thread] = []

    def request(self, uuid: str) -> None:
        with self._lock:
            if uuid in self._waiting:
                return  # the sync still to run reads the newest addresses anyway
            self._waiting.add(uuid)
            self._threads = [t for t in self._threads if t.is_alive()]
            thread = threading.Thread(target=self._run, args=(uuid,), name=f"addresses-{uuid[:8]}", daemon=True)  # fmt: skip
            self._threads.append(thread)
        thread.start()

    def _run(self, uuid: str) -> None:
        try:
            with self._lock:
                self._waiting.discard(uuid)
            sync(self.host, uuid)
        except InstanceNotFound:
            pass
        except Exception:
            LOG.exception("Recording the guest addresses of %s failed", uuid)

    def stop(self, timeout: float = 10.0) -> None:
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
