"""The real neutron-server of scripts/start-neutron.sh for the Neutron adapter tests: the
configuration that reaches it, a skip (a failure under CI) when it is not running, and a
project sandbox that removes what a test made, and the ``outside`` of a module's project (an
external network, the floating IP pool, routed from its ``private`` network).

Host names pick what Neutron's ``test`` mechanism driver does (decision 0056): bound to OVS and
left DOWN, bound and ACTIVE at once, or a failed binding.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from oslo_config import cfg

from openkeel.conf import make_config
from openkeel.network.neutron_client import NeutronClient, load_adapter

# A second neutron-server beside the catalog's (start-neutron.sh with NEUTRON_PORT and
# NEUTRON_REGISTER_ENDPOINT=0) is reached with OPENKEEL_TEST_NEUTRON_URL: endpoint_override.
NEUTRON_URL = os.environ.get("OPENKEEL_TEST_NEUTRON_URL", "http://127.0.0.1:9696")
KEYSTONE_URL = "http://127.0.0.1:5000/v3"
HOST_DOWN = "host-ovs-no_filter"  # bound (ovs), the port stays DOWN: no vif-plugged ever
HOST_ACTIVE = "host-ovs-filter-active"  # bound (ovs), ACTIVE at once
HOST_FAIL = "host-fail"  # binding_failed
POOL = f"public-{uuid.uuid4().hex[:8]}"  # the ``outside`` pool (unique: other runs have theirs)

NEUTRON_OPTIONS: dict[str, object] = {
    "openkeel_network.backend": "neutron",
    "neutron.auth_type": "password",
    "neutron.auth_url": KEYSTONE_URL,
    "neutron.username": "nova",
    "neutron.password": os.environ.get("NEUTRON_SERVICE_PASSWORD", "neutron-secret"),
    "neutron.project_name": "service",
    "neutron.user_domain_name": "Default",
    "neutron.project_domain_name": "Default",
    "neutron.region_name": "RegionOne",
    "neutron.valid_interfaces": ["public"],
}
if "OPENKEEL_TEST_NEUTRON_URL" in os.environ:
    NEUTRON_OPTIONS["neutron.endpoint_override"] = NEUTRON_URL


def neutron_required() -> None:
    """Skip (fail under CI) unless Keystone and neutron-server answer."""
    try:
        httpx.get(KEYSTONE_URL, timeout=3).raise_for_status()
        httpx.get(f"{NEUTRON_URL}/", timeout=3)
    except httpx.HTTPError:
        message = (
            f"neutron-server not running at {NEUTRON_URL} (or Keystone at :5000): run "
            "scripts/start-keystone.sh then scripts/start-neutron.sh"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def neutron_conf(**extra: object) -> cfg.ConfigOpts:
    return make_config(overrides={**NEUTRON_OPTIONS, **extra})


@dataclass
class Sandbox:
    """A project in Neutron; ``cleanup`` deletes every port, network and security group of the
    project but the ``kept`` networks. ``private`` is its network of the module (10.20.0.0/24)
    when made by the ``sandbox`` fixture."""

    client: NeutronClient
    project_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    kept: tuple[str, ...] = ()
    private: dict[str, Any] = field(default_factory=dict)

    def network(self, name: str, cidr: str | None = "10.20.0.0/24", **attrs: Any) -> dict[str, Any]:
        net = self.client.create("networks", {"name": name, "project_id": self.project_id, **attrs})
        if cidr:
            self.client.create("subnets", {"network_id": net["id"], "cidr": cidr, "ip_version": 4,
                                           "project_id": self.project_id})  # fmt: skip
        return self.client.show("networks", net["id"])

    def port(self, network_id: str, **attrs: Any) -> dict[str, Any]:
        return self.client.create("ports", {"network_id": network_id, "project_id": self.project_id, **attrs})  # fmt: skip

    def ports(self) -> list[dict[str, Any]]:
        return self.client.list("ports", {"project_id": self.project_id})

    def cleanup(self) -> None:
        for port in self.ports():
            self.client.delete("ports", port["id"])
        for net in self.client.list("networks", {"project_id": self.project_id}):
            if net["id"] not in self.kept:
                self.client.delete("networks", net["id"])
        for group in self.client.list("security-groups", {"project_id": self.project_id}):
            if group["name"] != "default":
                self.client.delete("security-groups", group["id"])


@pytest.fixture(scope="module")
def neutron_project() -> Iterator[tuple[str, dict[str, Any]]]:
    """A project and its network ``private`` for a module's tests (creating and deleting a
    network are the slowest calls Neutron has: once per module)."""
    neutron_required()
    box = Sandbox(NeutronClient(load_adapter(neutron_conf())))
    try:
        private = box.network("private")
    finally:
        box.client.close()
    yield box.project_id, private
    box = Sandbox(NeutronClient(load_adapter(neutron_conf())), box.project_id)
    try:
        box.cleanup()
    finally:
        box.client.close()


@pytest.fixture
def sandbox(neutron_project: tuple[str, dict[str, Any]]) -> Iterator[Sandbox]:
    """The module's project with a client of the test's own; what the test made is removed."""
    project_id, private = neutron_project
    box = Sandbox(
        NeutronClient(load_adapter(neutron_conf())), project_id, (private["id"],), private
    )
    try:
        yield box
    finally:
        box.cleanup()
        box.client.close()


@dataclass(frozen=True)
class Outside:
    """An external network (the pool, owned by another project) with a router from the
    module's ``private`` subnet to it, and a second, tiny pool with one address."""

    public: dict[str, Any]
    tiny: dict[str, Any]
    router_id: str


@pytest.fixture(scope="module")
def outside(neutron_project: tuple[str, dict[str, Any]]) -> Iterator[Outside]:
    project_id, private = neutron_project
    infra = Sandbox(NeutronClient(load_adapter(neutron_conf())))  # the pools' owner
    client = infra.client
    http = client._adapter  # the admin session, for the router's own verbs
    public = infra.network(POOL, cidr="172.24.40.0/24", **{"router:external": True})
    tiny = infra.network(f"{POOL}-tiny", cidr=None, **{"router:external": True})
    client.create("subnets", {"network_id": tiny["id"], "cidr": "172.24.41.0/29", "ip_version": 4,
                              "project_id": infra.project_id,
                              "allocation_pools": [{"start": "172.24.41.2", "end": "172.24.41.2"}]})  # fmt: skip
    router = client.create("routers", {"name": "edge", "project_id": infra.project_id,
                                       "external_gateway_info": {"network_id": public["id"]}})  # fmt: skip
    # the router's leg on private is a port of the infra project: the sandbox's cleanup of
    # the test project's ports leaves it alone
    leg = infra.port(private["id"], fixed_ips=[{"ip_address": "10.20.0.1"}])
    http.put(f"/v2.0/routers/{router['id']}/add_router_interface", json={"port_id": leg["id"]})
    try:
        yield Outside(public, tiny, router["id"])
    finally:
        for fip in client.list("floatingips", {"project_id": project_id}):
            client.delete("floatingips", fip["id"])
        http.put(f"/v2.0/routers/{router['id']}/remove_router_interface", json={"port_id": leg["id"]})  # fmt: skip
        client.update("routers", router["id"], {"external_gateway_info": {}})
        client.delete("routers", router["id"])
        infra.cleanup()
        client.close()


def new_client() -> NeutronClient:
    """An admin client of the test's own (close it: a client a module keeps open would make
    connections during its tests, which the leak check counts against them)."""
    return NeutronClient(load_adapter(neutron_conf()))


@dataclass
class AutoAllocation:
    """Neutron's requirements for an auto-allocated topology: a default external network
    (with a subnet) and a default IPv4 subnet pool, made by the module and removed with it;
    ``forget`` removes a project's topology."""

    owner: str = field(default_factory=lambda: uuid.uuid4().hex)
    external: dict[str, Any] = field(default_factory=dict)
    pool: dict[str, Any] = field(default_factory=dict)

    def make(self, client: NeutronClient) -> None:
        """The external network, not yet the default one, and the subnet pool."""
        box = Sandbox(client, self.owner)
        self.external = box.network(f"{POOL}-auto", cidr="172.24.60.0/24", **{"router:external": True})  # fmt: skip
        self.pool = client.create("subnetpools", {
            "name": f"{POOL}-auto", "prefixes": ["10.128.0.0/16"], "default_prefixlen": 26,
            "is_default": True, "shared": True, "project_id": self.owner})  # fmt: skip

    def require(self, client: NeutronClient, met: bool) -> None:
        """Neutron's requirements met (the external network is the default one) or not."""
        client.update("networks", self.external["id"], {"is_default": met})

    @staticmethod
    def forget(client: NeutronClient, project_id: str) -> None:
        client._adapter.delete(f"/v2.0/auto-allocated-topology/{project_id}")

    def remove(self, client: NeutronClient) -> None:
        if self.pool:
            client.delete("subnetpools", self.pool["id"])
        Sandbox(client, self.owner).cleanup()


@pytest.fixture(scope="module")
def auto_allocation() -> Iterator[AutoAllocation]:
    """The requirements, unmet until a test calls ``require(client, True)``. Fails when
    another default external network or subnet pool is there (a run that did not clean up).
    Neutron has one of each per deployment: a test using this fixture is marked ``serial``."""
    neutron_required()
    made = AutoAllocation()
    with contextlib.closing(new_client()) as client:
        externals = client.list("networks", {"router:external": True})
        assert not [n for n in externals if n.get("is_default")], "a default external network is left in Neutron"  # fmt: skip
        assert not [p for p in client.list("subnetpools") if p.get("is_default")], "a default subnet pool is left in Neutron"  # fmt: skip
        try:
            made.make(client)
        except BaseException:
            made.remove(client)
            raise
    yield made
    with contextlib.closing(new_client()) as client:
        made.remove(client)
