"""The unchanged ``openstack`` CLI against the all-in-one's network service: networks,
subnets, ports, security groups and rules, floating IPs, and servers booted on a network and
on a port the user made (their addresses are the ports')."""

from __future__ import annotations

import os
import subprocess
import time

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import OPENSTACK, osc

IMAGE = "cirros-0.6.3-x86_64-disk"


def test_network_commands_and_servers_on_their_ports(cloud: RunningCloud) -> None:
    names = {n["Name"] for n in osc(cloud, "network", "list")}
    assert {"private", "public"} <= names
    net = osc(cloud, "network", "create", "e2e-net")
    subnet = osc(cloud, "subnet", "create", "--network", "e2e-net", "--subnet-range",
                 "192.168.50.0/24", "e2e-subnet")  # fmt: skip
    assert subnet["gateway_ip"] == "192.168.50.1" and subnet["network_id"] == net["id"]
    group = osc(cloud, "security", "group", "create", "e2e-web")
    osc(cloud, "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "80",
        "--ingress", "e2e-web")  # fmt: skip
    rules = osc(cloud, "security", "group", "rule", "list", "e2e-web")
    assert any(r["Port Range"] == "80:80" for r in rules)
    port = osc(cloud, "port", "create", "--network", "e2e-net", "--fixed-ip",
               "ip-address=192.168.50.77", "--security-group", "e2e-web", "e2e-port")  # fmt: skip
    assert port["security_group_ids"] == [group["id"]]

    on_net = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
                 "--network", "e2e-net", "--security-group", "e2e-web", "--wait",
                 "e2e-on-net")  # fmt: skip
    on_port = osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
                  "--port", "e2e-port", "--wait", "e2e-on-port")  # fmt: skip
    assert on_port["addresses"] == {"e2e-net": ["192.168.50.77"]}
    [address] = on_net["addresses"]["e2e-net"]
    ports = osc(cloud, "port", "list", "--server", "e2e-on-net")
    assert [p["Fixed IP Addresses"][0]["ip_address"] for p in ports] == [address]
    # The server's security group is its port's.
    assert osc(cloud, "port", "show", ports[0]["ID"])["security_group_ids"] == [group["id"]]
    # Interfaces: one more on the private network, then gone again.
    osc(cloud, "server", "add", "network", "e2e-on-net", "private", "--no-output")
    assert len(osc(cloud, "port", "list", "--server", "e2e-on-net")) == 2
    assert "private" in osc(cloud, "server", "show", "e2e-on-net")["addresses"]
    osc(cloud, "server", "remove", "network", "e2e-on-net", "private", "--no-output")
    deadline = time.monotonic() + 60
    while len(osc(cloud, "port", "list", "--server", "e2e-on-net")) != 1:
        assert time.monotonic() < deadline, "the interface never went"
        time.sleep(0.5)  # the detach is a cast: polling its effect, bounded by the deadline
    osc(cloud, "server", "remove", "security", "group", "e2e-on-net", "e2e-web", "--no-output")
    osc(cloud, "server", "add", "security", "group", "e2e-on-net", "default", "--no-output")
    default = next(g for g in osc(cloud, "security", "group", "list") if g["Name"] == "default"
                   and g["Project"] == group["project_id"])  # fmt: skip
    assert osc(cloud, "port", "show", ports[0]["ID"])["security_group_ids"] == [default["ID"]]
    unknown = osc_fails(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE,
                        "--network", "e2e-net", "--security-group", "nope", "e2e-x")  # fmt: skip
    # (osc looks the name up in the network service first, as with Neutron.)
    assert "No SecurityGroup found for nope" in unknown

    fip = osc(cloud, "floating", "ip", "create", "public")
    assert fip["floating_ip_address"].startswith("172.24.4.")
    # As with Neutron, the floating IP reaches e2e-net only through a router.
    unreachable = osc_fails(cloud, "floating", "ip", "set", "--port", "e2e-port", fip["id"])
    assert "is not reachable from subnet" in unreachable
    router = osc(cloud, "router", "create", "e2e-router")
    assert router["status"] == "ACTIVE"
    osc(cloud, "router", "set", "--external-gateway", "public", "e2e-router", "--no-output")
    osc(cloud, "router", "add", "subnet", "e2e-router", "e2e-subnet", "--no-output")
    gateway = osc(cloud, "router", "show", "e2e-router")["external_gateway_info"]
    assert gateway["network_id"] == osc(cloud, "network", "show", "public")["id"]
    legs = osc(cloud, "port", "list", "--router", "e2e-router", "--long")
    assert "network:router_interface" in {p["Device Owner"] for p in legs}
    osc(cloud, "floating", "ip", "set", "--port", "e2e-port", fip["id"], "--no-output")
    shown = osc(cloud, "floating", "ip", "show", fip["id"])
    assert shown["fixed_ip_address"] == "192.168.50.77"
    # The network service reports the change (network-changed): the server shows the address.
    deadline = time.monotonic() + 60
    while fip["floating_ip_address"] not in str(
        osc(cloud, "server", "show", "e2e-on-port")["addresses"]
    ):
        assert time.monotonic() < deadline, "the floating IP never showed on the server"
        time.sleep(0.5)  # the event is a cast: polling its effect, bounded by the deadline

    osc(cloud, "server", "delete", "--wait", "e2e-on-net", "e2e-on-port", "--no-output")
    # The port compute made went with its server; the user's port stays, unbound.
    assert (
        osc(cloud, "port", "list", "--network", "e2e-net", "--device-owner", "compute:nova") == []
    )
    left = osc(cloud, "port", "show", "e2e-port")
    assert left["device_id"] == "" and left["fixed_ips"][0]["ip_address"] == "192.168.50.77"
    osc(cloud, "floating", "ip", "delete", fip["id"], "--no-output")
    in_use = osc_fails(cloud, "router", "delete", "e2e-router")
    assert "has ports still attached" in in_use
    osc(cloud, "router", "remove", "subnet", "e2e-router", "e2e-subnet", "--no-output")
    osc(cloud, "router", "delete", "e2e-router", "--no-output")
    osc(cloud, "port", "delete", "e2e-port", "--no-output")
    osc(cloud, "security", "group", "delete", "e2e-web", "--no-output")
    osc(cloud, "subnet", "delete", "e2e-subnet", "--no-output")
    osc(cloud, "network", "delete", "e2e-net", "--no-output")


def osc_fails(cloud: RunningCloud, *args: str) -> str:
    """The error output of an ``openstack`` command that must fail."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), PYTHONWARNINGS="ignore")
    done = subprocess.run([OPENSTACK, "--os-cloud", "openkeel", *args], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode != 0, done.stdout
    return done.stderr


def test_auto_allocated_topology_commands(cloud: RunningCloud) -> None:
    """``openstack network auto allocated topology create / delete --project``: the
    project's network, subnet and router on the default external network ``public``. (The
    client sends ``--project`` as given, not looked up: it is the project's id here.)"""
    project = osc(cloud, "project", "create", "--or-show", "e2e-auto")["id"]
    topology = ("network", "auto", "allocated", "topology")
    check = osc(cloud, *topology, "create", "--project", project, "--check-resources")
    assert osc(cloud, "network", "list", "--project", project) == [], check
    made = osc(cloud, *topology, "create", "--project", project)
    assert made["project_id"] == project
    network = osc(cloud, "network", "show", made["id"])
    assert network["name"] == "auto_allocated_network"
    [router] = osc(cloud, "router", "list", "--project", project)
    assert router["Name"] == "auto_allocated_router"
    assert osc(cloud, *topology, "create", "--project", project)["id"] == made["id"]
    osc(cloud, *topology, "delete", "--project", project, "--no-output")
    assert osc(cloud, "router", "list", "--project", project) == []
    assert osc(cloud, "network", "list", "--project", project) == []
