"""KubeVirt networking on a real kube-apiserver: network mappings, the addresses the cluster
gives guests, and NIC hot-plug under KubeVirt's rollout rules (issue 9 item 6, issue 12
item 4). The simulator plays virt-handler (tests/virt/kubevirt/sim_network.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace

import pytest

from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests import naming, netpol
from openkeel.virt.model import (
    InstanceSpec,
    LifecycleEvent,
    LifecycleTransition,
    NetworkInterface,
    PortSecurity,
)
from tests.virt.kubevirt import kube_env
from tests.virt.kubevirt.kube_env import KubeSession
from tests.virt.kubevirt.test_driver_k8s import make_spec, vm_of, vmi_of

POD_PORT = NetworkInterface("p-pod", "n-pod", "fa:16:3e:00:00:aa", ("10.244.255.3",), network_name="podnet")  # fmt: skip
LAN_PORT = NetworkInterface("p-lan", "n-lan", "fa:16:3e:00:00:bb", ("192.168.7.5",), network_name="lan")  # fmt: skip
IPAM_PORT = NetworkInterface("p-ipam", "n-ipam", "fa:16:3e:00:00:cc", ("172.31.0.99",), network_name="storage")  # fmt: skip


@pytest.fixture
def kube() -> KubeSession:
    session = kube_env.session()
    session.simulator.addressing.ipam_nads["infra/storage"] = "172.31.0.0/24"
    return session


def mapped(kube: KubeSession, host: str = "host-a", prefix: str | None = None, *, watch: bool = False) -> KubevirtDriver:  # fmt: skip
    drv = kube.driver(host, prefix or kube.node_prefix(), watch_events=watch)
    mappings = {"podnet": "pod", "n-lan": "infra/lan", "storage": "dhcp:infra/storage"}
    drv.settings = replace(drv.settings, network_mappings=mappings)
    return drv


@pytest.fixture
def driver(kube: KubeSession) -> Iterator[KubevirtDriver]:
    drv = mapped(kube)
    yield drv
    drv.cleanup_host("host-a")


def test_ports_go_where_the_mapping_says(driver: KubevirtDriver) -> None:
    spec = replace(make_spec(), network=(POD_PORT, LAN_PORT, IPAM_PORT))
    driver.spawn(spec)
    template = vm_of(driver, spec)["spec"]["template"]["spec"]
    assert template["networks"] == [
        {"name": naming.interface_name("p-pod"), "pod": {}},
        {"name": naming.interface_name("p-lan"), "multus": {"networkName": "infra/lan"}},
        {"name": naming.interface_name("p-ipam"), "multus": {"networkName": "infra/storage"}},
    ]
    bindings = [next(b for b in ("masquerade", "bridge") if b in i) for i in template["domain"]["devices"]["interfaces"]]  # fmt: skip
    assert bindings == ["masquerade", "bridge", "bridge"]
    # The pod network's and the IPAM NAD's addresses are the cluster's; the plain NAD's
    # interface reports none (its address is the port's, configured in the guest).
    found = driver.get_guest_addresses(spec.ref)
    assert set(found) == {POD_PORT.mac_address, IPAM_PORT.mac_address}
    assert found[POD_PORT.mac_address][0].startswith("10.244.")
    assert found[IPAM_PORT.mac_address][0].startswith("172.31.0.")
    vmi = vmi_of(driver, spec)
    assert vmi is not None
    pod_status = next(i for i in vmi["status"]["interfaces"] if i["mac"] == POD_PORT.mac_address)
    assert found[POD_PORT.mac_address] == (pod_status["ipAddress"],)


def test_a_second_pod_network_port_is_refused(driver: KubevirtDriver) -> None:
    other = replace(POD_PORT, port_id="p-pod2", mac_address="fa:16:3e:00:00:ab")
    spec = replace(make_spec(), network=(POD_PORT, other))
    with pytest.raises(errors.PermanentDriverError, match="at most one pod network interface"):
        driver.spawn(spec)
    assert vmi_of(driver, spec) is None


def test_live_migration_gives_a_new_pod_address_and_an_event(kube: KubeSession) -> None:
    prefix = kube.node_prefix()
    source, dest = mapped(kube, "host-a", prefix, watch=True), mapped(kube, "host-b", prefix, watch=True)  # fmt: skip
    spec = replace(make_spec(), network=(POD_PORT,))
    events: list[tuple[str, str, LifecycleTransition]] = []
    changed = threading.Event()

    def listener(host: str) -> object:
        def on_event(event: LifecycleEvent) -> None:
            events.append((host, event.instance_uuid, event.transition))
            if event.transition is LifecycleTransition.ADDRESSES_CHANGED:
                changed.set()

        return on_event

    source.register_event_listener(listener("host-a"))  # type: ignore[arg-type]
    dest.register_event_listener(listener("host-b"))  # type: ignore[arg-type]
    try:
        source.spawn(spec)
        before = source.get_guest_addresses(spec.ref)[POD_PORT.mac_address]
        assert changed.wait(10), events
        changed.clear()
        source.live_migration(spec.ref, "host-b", lambda _p: None)
        after = dest.get_guest_addresses(spec.ref)[POD_PORT.mac_address]
        assert after != before
        assert changed.wait(10), events
        assert ("host-b", spec.uuid, LifecycleTransition.ADDRESSES_CHANGED) in events
    finally:
        source.cleanup_host("host-a")
        dest.cleanup_host("host-b")


def _interfaces_of(drv: KubevirtDriver, spec: object) -> list[str]:
    vmi = vmi_of(drv, spec)  # type: ignore[arg-type]
    return [i["name"] for i in (vmi or {}).get("status", {}).get("interfaces", [])]


def test_hot_plug_and_unplug_reach_the_running_guest(driver: KubevirtDriver) -> None:
    spec = replace(make_spec(), network=(POD_PORT,))
    driver.spawn(spec)
    driver.attach_interface(spec.ref, LAN_PORT)
    assert naming.interface_name("p-lan") in _interfaces_of(driver, spec)
    driver.attach_interface(spec.ref, LAN_PORT)  # idempotent
    driver.detach_interface(spec.ref, "p-lan")
    assert naming.interface_name("p-lan") not in _interfaces_of(driver, spec)
    template = vm_of(driver, spec)["spec"]["template"]["spec"]
    assert template["domain"]["devices"]["interfaces"][1]["state"] == "absent"
    driver.detach_interface(spec.ref, "p-lan")  # idempotent


def test_nothing_is_hot_plugged_on_the_pod_network(driver: KubevirtDriver) -> None:
    spec = replace(make_spec(), network=(LAN_PORT,))
    driver.spawn(spec)
    with pytest.raises(errors.NotSupported):
        driver.attach_interface(spec.ref, POD_PORT)
    with pytest.raises(errors.NotSupported):
        spec2 = replace(make_spec(), network=(POD_PORT,))
        driver.spawn(spec2)
        driver.detach_interface(spec2.ref, "p-pod")
    names = [i["name"] for i in vm_of(driver, spec)["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]]  # fmt: skip
    assert names == [naming.interface_name("p-lan")]


def test_hot_plug_under_stage_rollout_fails_and_puts_the_template_back(kube: KubeSession, driver: KubevirtDriver) -> None:  # fmt: skip
    spec = replace(make_spec(), network=(LAN_PORT,))
    driver.spawn(spec)
    kube.simulator.rollout_strategy = "Stage"
    try:
        with pytest.raises(errors.PermanentDriverError, match="LiveUpdate"):
            driver.attach_interface(spec.ref, IPAM_PORT)
    finally:
        kube.simulator.rollout_strategy = "LiveUpdate"
    names = [i["name"] for i in vm_of(driver, spec)["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]]  # fmt: skip
    assert names == [naming.interface_name("p-lan")]
    assert _interfaces_of(driver, spec) == [naming.interface_name("p-lan")]


def test_a_stopped_guest_takes_the_new_interface_at_its_next_start(driver: KubevirtDriver) -> None:
    spec = replace(make_spec(), network=(LAN_PORT,))
    driver.spawn(spec)
    driver.power_off(spec.ref)
    driver.attach_interface(spec.ref, IPAM_PORT)
    driver.power_on(spec)
    deadline = time.monotonic() + 30
    while naming.interface_name("p-ipam") not in _interfaces_of(driver, spec):
        assert time.monotonic() < deadline, vmi_of(driver, spec)
        time.sleep(0.02)
    assert IPAM_PORT.mac_address in driver.get_guest_addresses(spec.ref)
    assert kube_env.session().client.get_or_none(k.VMS, naming.vm_name(spec.uuid), driver._ns(spec.ref))  # fmt: skip


def _groups(*rules_of: tuple[str, list[dict[str, object]]]) -> dict[str, Mapping[str, object]]:
    return {gid: {"id": gid, "name": gid, "security_group_rules": rules} for gid, rules in rules_of}


def _tcp(rule_id: str, port: int, prefix: str) -> dict[str, object]:
    return {"id": rule_id, "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
            "port_range_min": port, "port_range_max": port, "remote_ip_prefix": prefix}  # fmt: skip


def _policies(
    kube: KubeSession, driver: KubevirtDriver, spec: InstanceSpec
) -> dict[str, k.JsonObj]:
    found = kube.client.items(k.NETWORK_POLICIES, driver._ns(spec.ref), naming.server_selector(spec.uuid))  # fmt: skip
    return {p["metadata"]["labels"][netpol.LABEL_SECURITY_GROUP_ID]: p for p in found}


def test_security_groups_of_the_pod_port_are_network_policies_kept_in_step(
    kube: KubeSession, driver: KubevirtDriver
) -> None:
    """Decision 0077 on the real kube-apiserver (which validates NetworkPolicy): one policy per
    group of the pod-network port (the Multus port's group is not covered), updated when a
    rule changes, deleted when the group leaves the port, untouched when nothing changed,
    deleted with the server; another server's policies are left alone."""
    spec = replace(make_spec(), network=(POD_PORT, LAN_PORT))
    other = replace(make_spec(), network=(POD_PORT,))
    driver.spawn(spec)
    groups = _groups(
        ("g-web", [_tcp("web", 443, "0.0.0.0/0")]),
        ("g-default", [{"id": "out", "direction": "egress", "ethertype": "IPv4"},
                       {"id": "peers", "direction": "ingress", "ethertype": "IPv4", "remote_group_id": "g-default"},
                       {"id": "ping", "direction": "ingress", "ethertype": "IPv4", "protocol": "icmp"}]),
        ("g-lan", [_tcp("ssh", 22, "192.168.7.0/24")]),
    )  # fmt: skip
    security = PortSecurity(
        ports={"p-pod": ("g-web", "g-default"), "p-lan": ("g-lan",)},
        groups=groups,
        members={"g-default": (spec.uuid, other.uuid)},
    )
    driver.refresh_security_groups(spec.ref, spec.network, security)
    driver.refresh_security_groups(other.ref, other.network, PortSecurity({"p-pod": ("g-web",)}, groups))  # fmt: skip
    made = _policies(kube, driver, spec)
    assert sorted(made) == ["g-default", "g-web"]
    web = made["g-web"]["spec"]
    assert web["podSelector"] == {"matchLabels": {naming.LABEL_SERVER_ID: spec.uuid}}
    assert web["policyTypes"] == ["Ingress", "Egress"] and "egress" not in web
    assert web["ingress"] == [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"protocol": "TCP", "port": 443}]}]  # fmt: skip
    default = made["g-default"]
    assert default["spec"]["ingress"][0]["from"][0]["podSelector"]["matchExpressions"][0]["values"] == sorted([spec.uuid, other.uuid])  # fmt: skip
    assert "ping: protocol icmp" in default["metadata"]["annotations"][netpol.ANNOTATION_UNMAPPED]
    # nothing changed: nothing written
    driver.refresh_security_groups(spec.ref, spec.network, security)
    again = _policies(kube, driver, spec)
    assert {g: p["metadata"]["resourceVersion"] for g, p in again.items()} == {g: p["metadata"]["resourceVersion"] for g, p in made.items()}  # fmt: skip
    # a rule added to g-web, g-default removed from the port (removeSecurityGroup)
    changed = dict(groups, **_groups(("g-web", [_tcp("web", 443, "0.0.0.0/0"), _tcp("alt", 8443, "10.0.0.0/8")])))  # fmt: skip
    driver.refresh_security_groups(spec.ref, spec.network, PortSecurity({"p-pod": ("g-web",)}, changed))  # fmt: skip
    now = _policies(kube, driver, spec)
    assert sorted(now) == ["g-web"] and len(now["g-web"]["spec"]["ingress"]) == 2
    # a server without groups on its pod port (port security off): no policy
    driver.refresh_security_groups(spec.ref, spec.network, PortSecurity({"p-pod": ()}, changed))
    assert _policies(kube, driver, spec) == {}
    driver.refresh_security_groups(spec.ref, spec.network, PortSecurity({"p-pod": ("g-web",)}, changed))  # fmt: skip
    driver.destroy(spec.ref)
    assert _policies(kube, driver, spec) == {}
    assert sorted(_policies(kube, driver, other)) == ["g-web"]
    driver.cleanup(other.ref)
    assert _policies(kube, driver, other) == {}


def test_network_policies_can_be_turned_off(driver: KubevirtDriver) -> None:
    """``[kubevirt] security_group_policies = false``: the compute host neither asks for the
    groups nor refreshes them."""
    assert driver.enforces_security_groups and driver.security_group_refresh_interval == 60
    driver.settings = replace(driver.settings, security_group_policies=False)
    assert not driver.enforces_security_groups and driver.security_group_refresh_interval == -1
