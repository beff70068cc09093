"""Choosing the virt driver from ``[DEFAULT] compute_driver`` (the composition roots call this).

The compute role knows only :class:`~openkeel.virt.driver.ComputeDriver`; this is the one place
that names concrete drivers.
"""

from __future__ import annotations

from oslo_config import cfg

from openkeel.virt.driver import ComputeDriver

FAKE = "fake.FakeDriver"
KUBEVIRT = "kubevirt.KubevirtDriver"


def load_driver(conf: cfg.ConfigOpts, nodename: str | None = None) -> ComputeDriver:
    """A new driver instance as configured (one per compute host).

    The simulated driver manages one node named ``nodename`` (the compute host's name, as
    Nova's fake driver names its node after ``[DEFAULT] host``): two simulated hosts must not
    report the same node, or their Placement providers collide.
    """
    if conf.compute_driver == KUBEVIRT:
        from openkeel.virt.kubevirt.driver import from_conf

        return from_conf(conf)
    from openkeel.virt.fake import FakeDriver
    from openkeel.virt.fake_config import FakeDriverConfig

    return FakeDriver(FakeDriverConfig(nodes=(nodename or conf.host,)))


def compute_hosts(conf: cfg.ConfigOpts, count: int = 1) -> list[str]:
    """The compute hosts one process should run: the Kubernetes nodes for KubeVirt (one
    compute host per node, named after it), else ``count`` simulated hosts: ``[DEFAULT] host``,
    then ``<host>-2`` ... ``<host>-<count>``."""
    if conf.compute_driver != KUBEVIRT:
        return [conf.host, *(f"{conf.host}-{n}" for n in range(2, count + 1))]
    from openkeel.virt.kubevirt.client import KubeClient, KubeConfig
    from openkeel.virt.kubevirt.nodes import availability_zones

    client = KubeClient(KubeConfig.load(conf.kubevirt.kubeconfig))
    try:
        return sorted(availability_zones(client))
    finally:
        client.close()
