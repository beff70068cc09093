"""Choosing the virt driver from ``[DEFAULT] compute_driver`` (the composition roots call this).

The compute role knows only :class:`~openkeel.virt.driver.ComputeDriver`; this is the one place
that names concrete drivers.
"""

from __future__ import annotations

from oslo_config import cfg

from openkeel.virt.driver import ComputeDriver

FAKE = "fake.FakeDriver"
KUBEVIRT = "kubevirt.KubevirtDriver"


def load_driver(conf: cfg.ConfigOpts) -> ComputeDriver:
    """A new driver instance as configured (one per compute host)."""
    if conf.compute_driver == KUBEVIRT:
        from openkeel.virt.kubevirt.driver import from_conf

        return from_conf(conf)
    from openkeel.virt.fake import FakeDriver

    return FakeDriver()


def compute_hosts(conf: cfg.ConfigOpts) -> list[str]:
    """The compute hosts one process should run: the Kubernetes nodes for KubeVirt (one
    compute host per node, named after it), else ``[DEFAULT] host``."""
    if conf.compute_driver != KUBEVIRT:
        return [conf.host]
    from openkeel.virt.kubevirt.client import KubeClient, KubeConfig
    from openkeel.virt.kubevirt.nodes import availability_zones

    client = KubeClient(KubeConfig.load(conf.kubevirt.kubeconfig))
    try:
        return sorted(availability_zones(client))
    finally:
        client.close()
