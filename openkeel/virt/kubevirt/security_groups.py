"""Security groups as NetworkPolicies (issue 12, decision 0077): the driver side.

The compute host hands the driver the groups of the server's ports (``PortSecurity``); the
driver writes one NetworkPolicy per group of the server's pod-network port
(``manifests.netpol``), updates those that changed and deletes the server's other ones (a
group removed, a port gone, the option turned off). Ports on Multus networks are not covered:
NetworkPolicy filters the pod's own interface only. ``cleanup`` deletes them with the server's
other objects (they carry its server-id label).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase
from openkeel.virt.kubevirt.client import ConflictError, JsonObj, KubeClient
from openkeel.virt.kubevirt.manifests import naming, netpol
from openkeel.virt.kubevirt.manifests.networks import target_of
from openkeel.virt.model import InstanceRef, NetworkInterface, PortSecurity

LOG = logging.getLogger(__name__)


class SecurityGroupsMixin(KubevirtBase):
    @property
    def enforces_security_groups(self) -> bool:  # type: ignore[override]
        return self.settings.security_group_policies

    @property
    def security_group_refresh_interval(self) -> int:  # type: ignore[override]
        return self.settings.security_group_refresh_interval if self.settings.security_group_policies else -1  # fmt: skip

    def wanted_policies(
        self, instance: InstanceRef, network: Sequence[NetworkInterface], security: PortSecurity
    ) -> list[JsonObj]:
        """The NetworkPolicies the server should have."""
        ns = self._ns(instance)
        groups: dict[str, None] = {}
        for port in network:
            if target_of(port, self.settings, ns).pod:
                groups.update(dict.fromkeys(security.ports.get(port.port_id, ())))
        return [
            netpol.network_policy(instance.uuid, ns, security.groups[g], security.members)
            for g in groups
            if g in security.groups
        ]

    def refresh_security_groups(
        self, instance: InstanceRef, network: Sequence[NetworkInterface], security: PortSecurity
    ) -> None:
        wanted = {p["metadata"]["name"]: p for p in self.wanted_policies(instance, network, security)}  # fmt: skip
        ns = self._ns(instance)

        def apply() -> None:
            if wanted:
                self.client.ensure_namespace(ns, {naming.LABEL_MANAGED_BY: naming.MANAGED_BY})
            have = {p["metadata"]["name"]: p for p in self.client.items(k.NETWORK_POLICIES, ns, naming.server_selector(instance.uuid))}  # fmt: skip
            for name, body in wanted.items():
                current = have.get(name)
                if current is None:
                    _create(self.client, body)
                elif _differs(current, body):
                    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                    self.client.replace(k.NETWORK_POLICIES, body)
            for name in sorted(have.keys() - wanted.keys()):
                self.client.delete(k.NETWORK_POLICIES, name, ns)

        self._retrying(apply, f"writing the NetworkPolicies of {instance.uuid}")


def _create(client: KubeClient, body: JsonObj) -> None:
    try:
        client.create(k.NETWORK_POLICIES, body)
    except ConflictError as exc:  # made meanwhile by another refresh: the next one checks it
        if not exc.already_exists:
            raise


def _differs(current: JsonObj, body: JsonObj) -> bool:
    meta, want = current.get("metadata", {}), body["metadata"]
    return (
        current.get("spec") != body["spec"]
        or meta.get("labels") != want["labels"]
        or (meta.get("annotations") or {}).get(netpol.ANNOTATION_UNMAPPED)
        != (want.get("annotations") or {}).get(netpol.ANNOTATION_UNMAPPED)
    )
