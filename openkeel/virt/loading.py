"""Choosing the virt driver from ``[DEFAULT] compute_driver`` (the composition roots call this).

The compute role knows only :class:`~openkeel.virt.driver.ComputeDriver`; this is the one place
that names concrete drivers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from oslo_config import cfg

from openkeel.virt.console_stream import ConsoleOpener, open_tcp
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
    from openkeel.conf import fake_driver
    from openkeel.virt.fake import FakeDriver
    from openkeel.virt.fake_config import FakeDriverConfig

    instances = conf.instances_path or str(Path(conf.state_path) / "instances")
    config = FakeDriverConfig(
        nodes=(nodename or conf.host,),
        instances_path=instances,
        config_drive_format=conf.config_drive_format,
        delays=fake_driver.delays(conf),
    )
    return FakeDriver(config)


def compute_hosts(conf: cfg.ConfigOpts, count: int = 1) -> list[str]:
    """The compute hosts one process should run: the Kubernetes nodes for KubeVirt (one
    compute host per node, named after it), else ``count`` simulated hosts: ``[DEFAULT] host``,
    then ``<host>-2`` ... ``<host>-<count>``."""
    if conf.compute_driver != KUBEVIRT:
        return [conf.host, *(f"{conf.host}-{n}" for n in range(2, count + 1))]
    from openkeel.virt.kubevirt.client import KubeClient, KubeConfig
    from openkeel.virt.kubevirt.nodes import node_names

    client = KubeClient(KubeConfig.load(conf.kubevirt.kubeconfig, conf.kubevirt.kubeconfig_context))
    try:
        return node_names(client, conf.kubevirt.node_label_selector)
    finally:
        client.close()


def follow_nodes(
    conf: cfg.ConfigOpts,
    known: Iterable[str],
    on_join: Callable[[str], None],
    on_leave: Callable[[str], None],
) -> Callable[[], None] | None:
    """KubeVirt: follow the Nodes of ``[kubevirt] node_label_selector`` (``known``: those
    served already) with ``on_join``/``on_leave``; returns the function that stops following.
    None for the simulated driver, whose hosts are fixed."""
    if conf.compute_driver != KUBEVIRT:
        return None
    from openkeel.virt.kubevirt.client import KubeClient, KubeConfig
    from openkeel.virt.kubevirt.nodes import NodeWatch

    client = KubeClient(KubeConfig.load(conf.kubevirt.kubeconfig, conf.kubevirt.kubeconfig_context))
    selector = conf.kubevirt.node_label_selector
    watch = NodeWatch(client, selector, on_join, on_leave, known=set(known)).start()

    def stop() -> None:
        watch.stop()  # joins the watch thread before its client closes
        client.close()

    return stop


def console_opener(conf: cfg.ConfigOpts) -> ConsoleOpener:
    """How the console proxies reach a guest's console: KubeVirt's websocket subresources
    through the API server (the kubeconfig's credentials), else plain TCP."""
    if conf.compute_driver != KUBEVIRT:
        return open_tcp
    from openkeel.virt.kubevirt.client import KubeConfig
    from openkeel.virt.kubevirt.console_stream import KubevirtConsoleOpener

    return KubevirtConsoleOpener(
        KubeConfig.load(conf.kubevirt.kubeconfig, conf.kubevirt.kubeconfig_context)
    )
