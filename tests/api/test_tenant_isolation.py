"""Tenant isolation: every route and action OpenKeel serves, tried by project B (as member and
as reader) on project A's objects, finds 0 crossings.

The routes come from the route table itself (``build_routes``), so a new route fails
``test_every_route_is_classified`` until it is given a path here and an expectation: the
status Nova answers B (404 where Nova's lookup is scoped to the caller's project, 403 where
its policy check comes first or the route is admin-only), or ``SEEN`` for routes B may use on
its own behalf (lists, its own creations), whose answers must not show any of A's objects.
After every request, A's objects (as A and an admin see them) must be unchanged and no RPC
cast or call may have named A's server.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from openkeel.api.factory import build_routes
from openkeel.api.microversion import LEGACY_V2, MAX_VERSION
from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import image_service
from openkeel.db.image_catalog import DEFAULT_IMAGE
from openkeel.db.repositories import instance_actions, migrations
from openkeel.network import get_network_adapter
from openkeel.network.adapter import IngressRule, InstanceNetRef, Requester
from tests.api.server_fakes import IMAGE, Recorder, place, wire
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

ADMIN = "admin:admin"
ALICE = "alice:proj-a"
BOB = "bob:proj-b"
ROLES = {"member": "member,reader", "reader": "reader"}
SEEN = "seen"  # B may use the route; its answer must not show A's objects
ACTIONS_PATH = "/servers/{id}/action"
BOOT_ACTIONS_PATH = "/os-volumes_boot/{id}/action"
BOOT_ACTIONS = ("confirmResize", "createImage", "os-start", "os-stop", "reboot", "rebuild",
                "resize", "revertResize", "trigger_crash_dump")  # fmt: skip
BOB_PUBLIC_KEY = (
    ed25519.Ed25519PrivateKey.generate()
    .public_key()
    .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    .decode()
)


@dataclass
class World:
    """A's objects (and the secrets that must never reach B) plus B's own server."""

    server: str = ""
    building: str = ""  # a second server of A's, still a build request (not in a cell)
    group: str = ""
    migration: int = 0
    aggregate: int = 0
    image: str = ""
    address: str = ""  # A's server's fixed IP on the flat network
    network: str = ""
    secgroup: str = ""  # A's security group, with one rule
    rule: str = ""
    floating: str = ""  # A's floating IP (id and address), on A's server
    floating_address: str = ""
    volume: str = ""
    snapshot: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    recorders: tuple[Recorder, Recorder] | None = None


def _ok(resp: Any) -> Any:
    assert resp.status_code < 300, resp.text
    return resp.json() if resp.content else None


def _seed(api: ApiClient, services: ApiServices) -> World:
    world = World(recorders=wire(services))
    for flavorid, public in (("1", True), ("alice-flavor", False)):
        body = {"name": f"f-{flavorid}", "ram": 512, "vcpus": 1, "disk": 1, "id": flavorid}
        _ok(
            api.post(
                "/v2.1/flavors", json={"flavor": {**body, "os-flavor-access:is_public": public}}
            )
        )
    access = {"addTenantAccess": {"tenant": "proj-a"}}
    _ok(api.post("/v2.1/flavors/alice-flavor/action", json=access))
    specs = {"extra_specs": {"alice:spec": "alice-secret-spec"}}
    _ok(api.post("/v2.1/flavors/alice-flavor/os-extra_specs", json=specs))
    key = _ok(api.post("/v2.1/os-keypairs", json={"keypair": {"name": "alice-key"}}, token=ALICE))
    group = {"server_group": {"name": "alice-secret-group", "policies": ["anti-affinity"]}}
    world.group = _ok(api.post("/v2.1/os-server-groups", json=group, token=ALICE))["server_group"][
        "id"
    ]
    server = {
        "name": "alice-secret-server",
        "imageRef": IMAGE,
        "flavorRef": "alice-flavor",
        "key_name": "alice-key",
        "metadata": {"alice-meta": "alice-secret-value"},
    }
    hints = {"group": world.group}
    created = api.post(
        "/v2.1/servers", json={"server": server, "os:scheduler_hints": hints}, token=ALICE
    )
    world.server = _ok(created)["server"]["id"]
    place(services, world.server)
    building = {"server": {**server, "name": "alice-secret-building"}}
    world.building = _ok(api.post("/v2.1/servers", json=building, token=ALICE))["server"]["id"]
    tags = {"tags": ["alice-secret-tag"]}
    _ok(api.put(f"/v2.1/servers/{world.server}/tags", json=tags, version="2.26", token=ALICE))
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        instance_actions.start_action(
            conn, world.server, "create", request_id="req-alice-secret", user_id="alice",
            project_id="proj-a",
        )  # fmt: skip
        world.migration = migrations.create(
            conn, instance_uuid=world.server, migration_type="live-migration", status="running",
            source_compute="host1", dest_compute="host2", updated_at=datetime(2026, 1, 1), user_id="alice", project_id="proj-a", source_node="host1", dest_node="host2",
        ).id  # fmt: skip
    world.image = "a1a1a1a1-0000-4000-8000-00000000a1a1"
    private = dataclasses.replace(
        DEFAULT_IMAGE, id=world.image, name="alice-secret-image", visibility="private",
        owner="proj-a", properties={"alice-prop": "alice-secret-prop"},
    )  # fmt: skip
    image_service(services).add(private)  # type: ignore[attr-defined]
    adapter = get_network_adapter(services.conf, services.api_db)
    vif = adapter.allocate_for_instance(InstanceNetRef(world.server, "proj-a"), [])[0]
    world.address = vif["network"]["subnets"][0]["ips"][0]["address"]
    world.network = vif["network"]["id"]
    _seed_network_proxies(world, adapter)
    _ok(api.put("/v2.1/os-quota-sets/proj-a", json={"quota_set": {"instances": 7}}))
    world.aggregate = _ok(api.post("/v2.1/os-aggregates", json={"aggregate": {"name": "agg"}}))[
        "aggregate"
    ]["id"]
    volume = {"volume": {"size": 1, "display_name": "alice-secret-volume"}}
    world.volume = _ok(api.post("/v2.1/os-volumes", json=volume, version="2.35", token=ALICE))[
        "volume"
    ]["id"]
    snapshot = {"snapshot": {"volume_id": world.volume, "display_name": "alice-secret-snap"}}
    world.snapshot = _ok(
        api.post("/v2.1/os-snapshots", json=snapshot, version="2.35", token=ALICE)
    )["snapshot"]["id"]
    world.secrets = {
        "volume": world.volume,
        "snapshot": world.snapshot,
        "server": world.server,
        "group": world.group,
        "image": world.image,
        "name": "alice-secret",  # every name and value above
        "fingerprint": key["keypair"]["fingerprint"],
        "request": "req-alice-secret",
        "building": world.building,
        "flavor": "alice-flavor",
        "keypair": "alice-key",
        "project": "proj-a",
        "security group": world.secgroup,
        "floating IP": world.floating,
    }
    for recorder in world.recorders or ():
        recorder.calls.clear()  # A's own boot; from here on, no call may name A's objects
    return world


def _seed_network_proxies(world: World, adapter: Any) -> None:
    """A's security group (with a rule) and floating IP (on A's server), made as A."""
    alice = Requester("proj-a")
    adapter.service.bootstrap("admin", {"id": world.network})  # the external network, public
    group = adapter.create_security_group(alice, "alice-secret-sg", "alice-secret-description")
    world.secgroup = group["id"]
    rule = IngressRule(group["id"], "tcp", 22, 22, cidr="10.0.0.0/8")
    world.rule = adapter.create_security_group_rule(alice, rule)["id"]
    fip = adapter.allocate_floating_ip(alice, None)
    world.floating, world.floating_address = fip["id"], fip["floating_ip_address"]
    adapter.associate_floating_ip(alice, world.server, world.floating_address, world.address)


def _paths(world: World) -> dict[str, str]:
    """Each route template with A's objects (or a harmless value) in its placeholders."""
    sid, image = world.server, world.image
    return {
        "/": "/",
        "/versions/{id}": "/v2.1",  # served at the root; not project data
        "/extensions": "/v2.1/extensions",
        "/extensions/{alias}": "/v2.1/extensions/os-keypairs",
        "/flavors": "/v2.1/flavors",
        "/flavors/detail": "/v2.1/flavors/detail",
        "/flavors/{id}": "/v2.1/flavors/alice-flavor",
        "/flavors/{id}/action": "/v2.1/flavors/alice-flavor/action",
        "/flavors/{flavor_id}/os-extra_specs": "/v2.1/flavors/alice-flavor/os-extra_specs",
        "/flavors/{flavor_id}/os-extra_specs/{id}": (
            "/v2.1/flavors/alice-flavor/os-extra_specs/alice:spec"
        ),
        "/flavors/{flavor_id}/os-flavor-access": "/v2.1/flavors/alice-flavor/os-flavor-access",
        "/images": "/v2.1/images",
        "/images/detail": "/v2.1/images/detail",
        "/images/{id}": f"/v2.1/images/{image}",
        "/images/{image_id}/metadata": f"/v2.1/images/{image}/metadata",
        "/images/{image_id}/metadata/{id}": f"/v2.1/images/{image}/metadata/alice-prop",
        "/limits": "/v2.1/limits",
        "/os-aggregates": "/v2.1/os-aggregates",
        "/os-aggregates/{id}": f"/v2.1/os-aggregates/{world.aggregate}",
        "/os-aggregates/{id}/action": f"/v2.1/os-aggregates/{world.aggregate}/action",
        "/os-aggregates/{id}/images": f"/v2.1/os-aggregates/{world.aggregate}/images",
        "/os-availability-zone": "/v2.1/os-availability-zone",
        "/os-networks": "/v2.1/os-networks",
        "/os-tenant-networks": "/v2.1/os-tenant-networks",
        "/os-tenant-networks/{id}": "/v2.1/os-tenant-networks/3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001",
        "/os-security-groups": "/v2.1/os-security-groups",
        "/os-security-groups/{id}": f"/v2.1/os-security-groups/{world.secgroup}",
        "/os-security-group-rules": "/v2.1/os-security-group-rules",
        "/os-security-group-rules/{id}": f"/v2.1/os-security-group-rules/{world.rule}",
        "/os-floating-ips": "/v2.1/os-floating-ips",
        "/os-floating-ips/{id}": f"/v2.1/os-floating-ips/{world.floating}",
        "/os-floating-ip-pools": "/v2.1/os-floating-ip-pools",
        # The all-in-one's shared private network: every project sees it.
        "/os-networks/{id}": "/v2.1/os-networks/3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001",
        "/os-availability-zone/detail": "/v2.1/os-availability-zone/detail",
        "/os-volumes": "/v2.1/os-volumes",
        "/os-volumes/detail": "/v2.1/os-volumes/detail",
        "/os-volumes/{id}": f"/v2.1/os-volumes/{world.volume}",
        "/os-snapshots": "/v2.1/os-snapshots",
        "/os-snapshots/detail": "/v2.1/os-snapshots/detail",
        "/os-snapshots/{id}": f"/v2.1/os-snapshots/{world.snapshot}",
        "/os-hypervisors": "/v2.1/os-hypervisors",
        "/os-hypervisors/detail": "/v2.1/os-hypervisors/detail",
        "/os-hypervisors/statistics": "/v2.1/os-hypervisors/statistics",
        "/os-hypervisors/{id}": "/v2.1/os-hypervisors/1",
        "/os-hypervisors/{id}/search": "/v2.1/os-hypervisors/host1/search",
        "/os-hypervisors/{id}/servers": "/v2.1/os-hypervisors/host1/servers",
        "/os-hypervisors/{id}/uptime": "/v2.1/os-hypervisors/1/uptime",
        "/os-keypairs": "/v2.1/os-keypairs",
        "/os-keypairs/{id}": "/v2.1/os-keypairs/alice-key",
        "/os-migrations": "/v2.1/os-migrations",
        "/os-simple-tenant-usage": "/v2.1/os-simple-tenant-usage",
        "/os-simple-tenant-usage/{id}": "/v2.1/os-simple-tenant-usage/proj-a",
        "/os-quota-class-sets/{id}": "/v2.1/os-quota-class-sets/default",
        "/os-quota-sets/{id}": "/v2.1/os-quota-sets/proj-a",
        "/os-quota-sets/{id}/defaults": "/v2.1/os-quota-sets/proj-a/defaults",
        "/os-quota-sets/{id}/detail": "/v2.1/os-quota-sets/proj-a/detail",
        "/os-server-groups": "/v2.1/os-server-groups",
        "/os-server-groups/{id}": f"/v2.1/os-server-groups/{world.group}",
        "/os-services": "/v2.1/os-services",
        "/os-services/{id}": "/v2.1/os-services/5c1a7e7e-0000-4000-8000-000000000001",
        "/servers": "/v2.1/servers",
        "/servers/detail": "/v2.1/servers/detail",
        "/servers/{id}": f"/v2.1/servers/{sid}",
        ACTIONS_PATH: f"/v2.1/servers/{sid}/action",
        # Nova's os-volumes_boot: the servers API again under another path (until 2.102).
        "/os-volumes_boot": "/v2.1/os-volumes_boot",
        "/os-volumes_boot/detail": "/v2.1/os-volumes_boot/detail",
        "/os-volumes_boot/{id}": f"/v2.1/os-volumes_boot/{sid}",
        BOOT_ACTIONS_PATH: f"/v2.1/os-volumes_boot/{sid}/action",
        "/servers/{server_id}/ips": f"/v2.1/servers/{sid}/ips",
        "/servers/{server_id}/ips/{id}": f"/v2.1/servers/{sid}/ips/private",
        "/servers/{server_id}/os-server-password": f"/v2.1/servers/{sid}/os-server-password",
        "/servers/{server_id}/topology": f"/v2.1/servers/{sid}/topology",
        "/servers/{server_id}/os-security-groups": f"/v2.1/servers/{sid}/os-security-groups",
        "/servers/{server_id}/os-interface": f"/v2.1/servers/{sid}/os-interface",
        "/servers/{server_id}/os-interface/{id}": f"/v2.1/servers/{sid}/os-interface/{sid}",
        "/servers/{server_id}/os-volume_attachments": f"/v2.1/servers/{sid}/os-volume_attachments",
        "/servers/{server_id}/os-volume_attachments/{id}": (
            f"/v2.1/servers/{sid}/os-volume_attachments/{sid}"
        ),
        "/servers/{server_id}/diagnostics": f"/v2.1/servers/{sid}/diagnostics",
        "/servers/{server_id}/remote-consoles": f"/v2.1/servers/{sid}/remote-consoles",
        "/os-console-auth-tokens/{id}": "/v2.1/os-console-auth-tokens/alice-console-token",
        "/os-server-external-events": "/v2.1/os-server-external-events",
        "/os-assisted-volume-snapshots": "/v2.1/os-assisted-volume-snapshots",
        "/os-assisted-volume-snapshots/{id}": "/v2.1/os-assisted-volume-snapshots/alice-snap",
        "/os-hosts": "/v2.1/os-hosts",
        "/os-instance_usage_audit_log": "/v2.1/os-instance_usage_audit_log",
        "/os-instance_usage_audit_log/{id}": "/v2.1/os-instance_usage_audit_log/2026-11-15 10:00:00",
        "/os-hosts/{id}": "/v2.1/os-hosts/host1",
        "/os-hosts/{id}/reboot": "/v2.1/os-hosts/host1/reboot",
        "/os-hosts/{id}/shutdown": "/v2.1/os-hosts/host1/shutdown",
        "/os-hosts/{id}/startup": "/v2.1/os-hosts/host1/startup",
        "/servers/{server_id}/metadata": f"/v2.1/servers/{sid}/metadata",
        "/servers/{server_id}/metadata/{id}": f"/v2.1/servers/{sid}/metadata/alice-meta",
        "/servers/{server_id}/migrations": f"/v2.1/servers/{sid}/migrations",
        "/servers/{server_id}/migrations/{id}": (
            f"/v2.1/servers/{sid}/migrations/{world.migration}"
        ),
        "/servers/{server_id}/migrations/{id}/action": (
            f"/v2.1/servers/{sid}/migrations/{world.migration}/action"
        ),
        "/servers/{server_id}/os-instance-actions": f"/v2.1/servers/{sid}/os-instance-actions",
        "/servers/{server_id}/os-instance-actions/{id}": (
            f"/v2.1/servers/{sid}/os-instance-actions/req-alice-secret"
        ),
        "/servers/{server_id}/tags": f"/v2.1/servers/{sid}/tags",
        "/servers/{server_id}/tags/{id}": f"/v2.1/servers/{sid}/tags/alice-secret-tag",
    }


# Request bodies valid for the route's schema at its newest version, so that B's request
# reaches the lookup and policy checks (a 400 would prove nothing).
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/servers/{server_id}/remote-consoles"): {
        "remote_console": {"protocol": "vnc", "type": "novnc"}
    },
    ("POST", "/flavors"): {"flavor": {"name": "bob", "ram": 1, "vcpus": 1, "disk": 1}},
    ("PUT", "/flavors/{id}"): {"flavor": {"description": "bob"}},
    ("POST", "/flavors/{flavor_id}/os-extra_specs"): {"extra_specs": {"hw:cpu_policy": "shared"}},
    ("PUT", "/flavors/{flavor_id}/os-extra_specs/{id}"): {"alice:spec": "bob"},
    ("POST", "/images/{image_id}/metadata"): {"metadata": {"bob": "x"}},
    ("PUT", "/images/{image_id}/metadata"): {"metadata": {"bob": "x"}},
    ("PUT", "/images/{image_id}/metadata/{id}"): {"meta": {"alice-prop": "bob"}},
    ("POST", "/os-aggregates"): {"aggregate": {"name": "bob"}},
    ("PUT", "/os-aggregates/{id}"): {"aggregate": {"name": "bob"}},
    ("POST", "/os-aggregates/{id}/images"): {"cache": [{"id": IMAGE}]},
    ("POST", "/os-keypairs"): {"keypair": {"name": "bob-key", "public_key": BOB_PUBLIC_KEY}},
    ("PUT", "/os-quota-class-sets/{id}"): {"quota_class_set": {"instances": 1}},
    ("PUT", "/os-quota-sets/{id}"): {"quota_set": {"instances": 1}},
    ("POST", "/os-server-groups"): {"server_group": {"name": "bob", "policy": "affinity"}},
    ("PUT", "/os-services/{id}"): {"status": "disabled"},
    ("PUT", "/os-hosts/{id}"): {"status": "disable"},
    ("POST", "/os-server-external-events"): {
        "events": [
            {"name": "network-changed", "server_uuid": "5c1a7e7e-0000-4000-8000-00000000000a"}
        ]
    },
    ("POST", "/servers"): {
        "server": {"name": "bob-vm", "imageRef": IMAGE, "flavorRef": "1", "networks": "none"}
    },
    ("PUT", "/servers/{id}"): {"server": {"name": "bob-was-here"}},
    ("POST", "/servers/{server_id}/metadata"): {"metadata": {"bob": "x"}},
    ("PUT", "/servers/{server_id}/metadata"): {"metadata": {"bob": "x"}},
    ("PUT", "/servers/{server_id}/metadata/{id}"): {"meta": {"alice-meta": "bob"}},
    ("PUT", "/servers/{server_id}/tags"): {"tags": ["bob"]},
    ("POST", "/os-security-groups"): {"security_group": {"name": "bob", "description": "b"}},
    ("PUT", "/os-security-groups/{id}"): {"security_group": {"name": "bob", "description": "b"}},
    ("POST", "/os-security-group-rules"): lambda world: {"security_group_rule": {
        "parent_group_id": world.secgroup, "ip_protocol": "tcp", "from_port": 80, "to_port": 80,
    }},
    ("POST", "/os-volumes"): {"volume": {"size": 1, "display_name": "bob-volume"}},
    # An unknown volume (A's is tried in _uses).
    ("POST", "/os-snapshots"): {"snapshot": {"volume_id": "5c1a7e7e-0000-4000-8000-00000000000c"}},
    ("POST", "/servers/{server_id}/os-volume_attachments"): {
        "volumeAttachment": {"volumeId": "5c1a7e7e-0000-4000-8000-00000000000b"}
    },
    ("PUT", "/servers/{server_id}/os-volume_attachments/{id}"): {
        "volumeAttachment": {"volumeId": "5c1a7e7e-0000-4000-8000-00000000000b"}
    },
    ("POST", "/os-assisted-volume-snapshots"): {"snapshot": {
        "volume_id": "5c1a7e7e-0000-4000-8000-00000000000b",
        "create_info": {"snapshot_id": "s", "type": "qcow2", "new_file": "f"},
    }},
}  # fmt: skip

ACTION_BODIES: dict[tuple[str, str], Any] = {
    ("/flavors/{id}/action", "addTenantAccess"): {"tenant": "proj-b"},
    ("/flavors/{id}/action", "removeTenantAccess"): {"tenant": "proj-a"},
    ("/os-aggregates/{id}/action", "add_host"): {"host": "host1"},
    ("/os-aggregates/{id}/action", "remove_host"): {"host": "host1"},
    ("/os-aggregates/{id}/action", "set_metadata"): {"metadata": {"bob": "x"}},
    (ACTIONS_PATH, "createImage"): {"name": "bob-snap"},
    (ACTIONS_PATH, "createBackup"): {"name": "bob-backup", "backup_type": "daily", "rotation": 1},
    (ACTIONS_PATH, "evacuate"): {},
    (ACTIONS_PATH, "os-getConsoleOutput"): {"length": 10},
    (ACTIONS_PATH, "addSecurityGroup"): {"name": "default"},
    (ACTIONS_PATH, "removeSecurityGroup"): {"name": "default"},
    (ACTIONS_PATH, "os-getRDPConsole"): {"type": "rdp-html5"},
    (ACTIONS_PATH, "os-getVNCConsole"): {"type": "novnc"},
    (ACTIONS_PATH, "os-getSPICEConsole"): {"type": "spice-html5"},
    (ACTIONS_PATH, "os-getSerialConsole"): {"type": "serial"},
    (ACTIONS_PATH, "os-migrateLive"): {"host": None, "block_migration": "auto"},
    (ACTIONS_PATH, "os-resetState"): {"state": "error"},
    (ACTIONS_PATH, "reboot"): {"type": "HARD"},
    (ACTIONS_PATH, "rebuild"): {"imageRef": IMAGE},
    (ACTIONS_PATH, "resize"): {"flavorRef": "1"},
    (ACTIONS_PATH, "changePassword"): {"adminPass": "bob-pw"},
    (ACTIONS_PATH, "addFixedIp"): lambda world: {"networkId": world.network},
    (ACTIONS_PATH, "removeFixedIp"): lambda world: {"address": world.address},
    (ACTIONS_PATH, "addFloatingIp"): lambda world: {"address": world.floating_address},
    (ACTIONS_PATH, "removeFloatingIp"): lambda world: {"address": world.floating_address},
}


@dataclass(frozen=True)
class Attempt:
    """One request of B: a route (and action) of the table at one microversion; version
    ``2.0`` is the legacy ``/v2`` mount, which serves the endpoints that date from 2.1."""

    method: str
    template: str
    action: str
    version: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.method, self.template, self.action)


LEGACY = "2.0"


def _attempts() -> list[Attempt]:
    """Every served method and action of the route table, at the newest version of each of
    its microversion windows and on /v2 (not-built 501s and removed 410s are not served)."""
    found: list[Attempt] = []
    for route in build_routes().routes():
        served = [(m, "", eps) for m, eps in route.methods.items()]
        served += [("POST", key, eps) for key, eps in route.actions.items()]
        for method, action, endpoints in served:
            for ep in endpoints:
                if ep.handler is None or ep.removed or ep.not_built:
                    continue
                version = min(ep.max_version, MAX_VERSION)
                found.append(Attempt(method, route.template, action, f"{version}"))
                if (
                    ep.serves(LEGACY_V2)
                    and route.template.startswith("/")
                    and route.template != "/"
                ):
                    found.append(Attempt(method, route.template, action, LEGACY))
    return found


# /v2 validates bodies as 2.1 does (where they differ from the newest version's).
LEGACY_ACTION_BODIES: dict[tuple[str, str], Any] = {
    (ACTIONS_PATH, "evacuate"): {"onSharedStorage": False},
    (ACTIONS_PATH, "os-migrateLive"): {
        "host": None, "block_migration": False, "disk_over_commit": False
    },
}  # fmt: skip


LEGACY_BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/os-server-groups"): {"server_group": {"name": "bob", "policies": ["affinity"]}},
    ("POST", "/servers"): {"server": {"name": "bob-vm", "imageRef": IMAGE, "flavorRef": "1"}},
    ("PUT", "/os-services/{id}"): {"host": "host1", "binary": "nova-compute"},
}


def _request(api: ApiClient, world: World, attempt: Attempt, role: str) -> Any:
    path = _paths(world)[attempt.template]
    legacy = attempt.version == LEGACY
    if attempt.action:
        bodies = {**ACTION_BODIES, **LEGACY_ACTION_BODIES} if legacy else ACTION_BODIES
        wanted = bodies.get((attempt.template, attempt.action))
        body: Any = {attempt.action: wanted(world) if callable(wanted) else wanted}
    else:
        plain = {**BODIES, **LEGACY_BODIES} if legacy else BODIES
        body = plain.get((attempt.method, attempt.template))
        body = body(world) if callable(body) else body
    headers = {"X-Roles": ROLES[role]}
    if legacy and path.startswith("/v2.1"):
        path = "/v2" + path.removeprefix("/v2.1")
    version = None if legacy else attempt.version
    return api.request(attempt.method, path, json=body, version=version, token=BOB, headers=headers)


def _snapshot(api: ApiClient, world: World) -> dict[str, Any]:
    """A's objects as A (and, for what only admins read, an admin) see them."""
    sid = world.server
    reads = [
        (ALICE, f"/v2.1/servers/{sid}", "2.104"),
        (ALICE, f"/v2.1/servers/{world.building}", "2.104"),
        (ALICE, f"/v2.1/images/{IMAGE}", "2.35"),
        (ALICE, "/v2.1/servers/detail", "2.104"),
        (ALICE, f"/v2.1/servers/{sid}/metadata", "2.1"),
        (ALICE, f"/v2.1/servers/{sid}/tags", "2.26"),
        (ALICE, f"/v2.1/servers/{sid}/os-instance-actions", "2.1"),
        (ADMIN, f"/v2.1/servers/{sid}/migrations", "2.80"),
        (ALICE, f"/v2.1/os-server-groups/{world.group}", "2.64"),
        (ALICE, "/v2.1/os-keypairs/alice-key", "2.10"),
        (ALICE, "/v2.1/flavors/alice-flavor", "2.75"),
        (ALICE, "/v2.1/flavors/alice-flavor/os-extra_specs", "2.1"),
        (ADMIN, "/v2.1/flavors/alice-flavor/os-flavor-access", "2.1"),
        (ADMIN, "/v2.1/flavors/detail?is_public=None", "2.75"),
        (ALICE, f"/v2.1/images/{world.image}", "2.1"),
        (ADMIN, "/v2.1/os-quota-sets/proj-a/detail", "2.1"),
        (ADMIN, "/v2.1/os-quota-class-sets/default", "2.1"),
        (ADMIN, f"/v2.1/os-aggregates/{world.aggregate}", "2.41"),
        (ADMIN, "/v2.1/os-services", "2.53"),
        (ALICE, "/v2.1/limits", "2.1"),
        (ALICE, f"/v2.1/os-security-groups/{world.secgroup}", "2.35"),
        (ALICE, "/v2.1/os-floating-ips", "2.35"),
    ]
    found = {
        path: api.get(path, version=version, token=token).json() for token, path, version in reads
    }
    # A build request's "updated" is the time of the request (Nova shows isotime(None)).
    building = [found[f"/v2.1/servers/{world.building}"]["server"]]
    building += [s for s in found["/v2.1/servers/detail"]["servers"] if s["id"] == world.building]
    for server in building:
        server.pop("updated")
    return found


def _rpc_naming_a(world: World) -> list[str]:
    assert world.recorders is not None
    calls = [c for recorder in world.recorders for c in recorder.calls]
    named = [f"{name}({kwargs!r})" for name, kwargs in calls]
    mentions = (world.server, world.building, world.group)
    return [text for text in named if any(uuid in text for uuid in mentions)]


# What Nova answers project B (member and reader alike, unless a pair (member, reader) is
# given) on each route with A's objects in its path; SEEN: B may use it, nothing of A's shows.
NOT_FOUND, FORBIDDEN, BAD = 404, 403, 400
EXPECT: dict[tuple[str, str, str], int | str | tuple[int | str, int | str]] = {
    ("GET", "/", ""): SEEN,
    ("GET", "/versions/{id}", ""): SEEN,
    ("GET", "/extensions", ""): SEEN,
    ("GET", "/extensions/{alias}", ""): SEEN,
    # Flavors: a private flavor is invisible without access; management is admin-only.
    ("GET", "/flavors", ""): SEEN,
    ("GET", "/flavors/detail", ""): SEEN,
    ("POST", "/flavors", ""): FORBIDDEN,
    ("GET", "/flavors/{id}", ""): NOT_FOUND,
    ("PUT", "/flavors/{id}", ""): FORBIDDEN,
    ("DELETE", "/flavors/{id}", ""): FORBIDDEN,
    ("POST", "/flavors/{id}/action", "addTenantAccess"): FORBIDDEN,
    ("POST", "/flavors/{id}/action", "removeTenantAccess"): FORBIDDEN,
    ("GET", "/flavors/{flavor_id}/os-flavor-access", ""): FORBIDDEN,
    ("GET", "/flavors/{flavor_id}/os-extra_specs", ""): NOT_FOUND,
    ("POST", "/flavors/{flavor_id}/os-extra_specs", ""): FORBIDDEN,
    ("GET", "/flavors/{flavor_id}/os-extra_specs/{id}", ""): NOT_FOUND,
    ("PUT", "/flavors/{flavor_id}/os-extra_specs/{id}", ""): FORBIDDEN,
    ("DELETE", "/flavors/{flavor_id}/os-extra_specs/{id}", ""): FORBIDDEN,
    # Images (proxy): A's private image does not exist for B.
    ("GET", "/images", ""): SEEN,
    ("GET", "/images/detail", ""): SEEN,
    ("GET", "/images/{id}", ""): NOT_FOUND,
    ("DELETE", "/images/{id}", ""): NOT_FOUND,
    ("GET", "/images/{image_id}/metadata", ""): NOT_FOUND,
    ("POST", "/images/{image_id}/metadata", ""): NOT_FOUND,
    ("PUT", "/images/{image_id}/metadata", ""): NOT_FOUND,
    ("GET", "/images/{image_id}/metadata/{id}", ""): NOT_FOUND,
    ("PUT", "/images/{image_id}/metadata/{id}", ""): NOT_FOUND,
    ("DELETE", "/images/{image_id}/metadata/{id}", ""): NOT_FOUND,
    ("GET", "/limits", ""): SEEN,
    # Admin-only resources.
    ("GET", "/os-aggregates", ""): FORBIDDEN,
    ("POST", "/os-aggregates", ""): FORBIDDEN,
    ("GET", "/os-aggregates/{id}", ""): FORBIDDEN,
    ("PUT", "/os-aggregates/{id}", ""): FORBIDDEN,
    ("DELETE", "/os-aggregates/{id}", ""): FORBIDDEN,
    ("POST", "/os-aggregates/{id}/action", "add_host"): FORBIDDEN,
    ("POST", "/os-aggregates/{id}/action", "remove_host"): FORBIDDEN,
    ("POST", "/os-aggregates/{id}/action", "set_metadata"): FORBIDDEN,
    ("POST", "/os-aggregates/{id}/images", ""): FORBIDDEN,
    ("GET", "/os-availability-zone", ""): SEEN,
    ("GET", "/os-networks", ""): SEEN,
    ("GET", "/os-volumes", ""): SEEN,
    ("GET", "/os-volumes/detail", ""): SEEN,
    # The proxies' policies target the caller's own project: a reader is refused first.
    ("POST", "/os-volumes", ""): (SEEN, FORBIDDEN),
    ("GET", "/os-volumes/{id}", ""): NOT_FOUND,
    ("DELETE", "/os-volumes/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("GET", "/os-snapshots", ""): SEEN,
    ("GET", "/os-snapshots/detail", ""): SEEN,
    ("POST", "/os-snapshots", ""): (NOT_FOUND, FORBIDDEN),
    ("GET", "/os-snapshots/{id}", ""): NOT_FOUND,
    ("DELETE", "/os-snapshots/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("GET", "/os-networks/{id}", ""): SEEN,
    # The network proxies: Neutron shows B only B's groups, rules and floating IPs (404); the
    # policy check on the caller's own project comes first for what a reader may not do.
    ("GET", "/os-tenant-networks", ""): SEEN,
    ("GET", "/os-tenant-networks/{id}", ""): SEEN,
    ("GET", "/os-security-groups", ""): SEEN,
    ("POST", "/os-security-groups", ""): (SEEN, FORBIDDEN),
    ("GET", "/os-security-groups/{id}", ""): NOT_FOUND,
    ("PUT", "/os-security-groups/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("DELETE", "/os-security-groups/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("POST", "/os-security-group-rules", ""): (NOT_FOUND, FORBIDDEN),
    ("DELETE", "/os-security-group-rules/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("GET", "/os-floating-ips", ""): SEEN,
    ("POST", "/os-floating-ips", ""): (SEEN, FORBIDDEN),
    ("GET", "/os-floating-ips/{id}", ""): NOT_FOUND,
    ("DELETE", "/os-floating-ips/{id}", ""): (NOT_FOUND, FORBIDDEN),
    ("GET", "/os-floating-ip-pools", ""): SEEN,
    # Nova finds the server by the floating IP's port, which B's Neutron does not show.
    ("POST", ACTIONS_PATH, "removeFloatingIp"): NOT_FOUND,
    ("GET", "/os-availability-zone/detail", ""): FORBIDDEN,
    ("GET", "/os-hypervisors", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/detail", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/statistics", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/{id}", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/{id}/search", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/{id}/servers", ""): FORBIDDEN,
    ("GET", "/os-hypervisors/{id}/uptime", ""): FORBIDDEN,
    ("GET", "/os-migrations", ""): FORBIDDEN,
    # usage of every project is admin's; of one project, that project's
    ("GET", "/os-simple-tenant-usage", ""): FORBIDDEN,
    ("GET", "/os-simple-tenant-usage/{id}", ""): FORBIDDEN,
    ("GET", "/os-services", ""): FORBIDDEN,
    ("PUT", "/os-services/{id}", ""): FORBIDDEN,
    ("DELETE", "/os-services/{id}", ""): FORBIDDEN,
    ("GET", "/os-quota-class-sets/{id}", ""): FORBIDDEN,
    ("PUT", "/os-quota-class-sets/{id}", ""): FORBIDDEN,
    # Another project's quota: only the defaults (the same for everyone) are open.
    ("GET", "/os-quota-sets/{id}", ""): FORBIDDEN,
    ("PUT", "/os-quota-sets/{id}", ""): FORBIDDEN,
    ("DELETE", "/os-quota-sets/{id}", ""): FORBIDDEN,
    ("GET", "/os-quota-sets/{id}/detail", ""): FORBIDDEN,
    ("GET", "/os-quota-sets/{id}/defaults", ""): SEEN,
    # Key pairs belong to a user: A's name does not exist for B; B may make its own.
    ("GET", "/os-keypairs", ""): SEEN,
    ("POST", "/os-keypairs", ""): SEEN,
    ("GET", "/os-keypairs/{id}", ""): NOT_FOUND,
    ("DELETE", "/os-keypairs/{id}", ""): NOT_FOUND,
    ("GET", "/os-server-groups", ""): SEEN,
    ("POST", "/os-server-groups", ""): (SEEN, FORBIDDEN),
    ("GET", "/os-server-groups/{id}", ""): NOT_FOUND,
    ("DELETE", "/os-server-groups/{id}", ""): NOT_FOUND,
    # Servers: Nova's instance lookup is scoped to the caller's project, before any policy.
    ("GET", "/servers", ""): SEEN,
    ("GET", "/servers/detail", ""): SEEN,
    ("POST", "/servers", ""): (SEEN, FORBIDDEN),
    ("GET", "/servers/{id}", ""): NOT_FOUND,
    ("PUT", "/servers/{id}", ""): NOT_FOUND,
    ("DELETE", "/servers/{id}", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/ips", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/ips/{id}", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-server-password", ""): NOT_FOUND,
    ("DELETE", "/servers/{server_id}/os-server-password", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/topology", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-security-groups", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-interface", ""): NOT_FOUND,
    ("POST", "/servers/{server_id}/os-interface", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-interface/{id}", ""): NOT_FOUND,
    ("DELETE", "/servers/{server_id}/os-interface/{id}", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-volume_attachments", ""): NOT_FOUND,
    ("POST", "/servers/{server_id}/os-volume_attachments", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-volume_attachments/{id}", ""): NOT_FOUND,
    ("DELETE", "/servers/{server_id}/os-volume_attachments/{id}", ""): NOT_FOUND,
    ("PUT", "/servers/{server_id}/os-volume_attachments/{id}", ""): NOT_FOUND,
    ("POST", "/os-assisted-volume-snapshots", ""): FORBIDDEN,
    ("DELETE", "/os-assisted-volume-snapshots/{id}", ""): FORBIDDEN,
    ("GET", "/servers/{server_id}/diagnostics", ""): NOT_FOUND,
    # Events are the other services' (service or admin role) to report.
    ("POST", "/os-server-external-events", ""): FORBIDDEN,
    ("GET", "/os-hosts", ""): FORBIDDEN,
    ("GET", "/os-instance_usage_audit_log", ""): FORBIDDEN,
    ("GET", "/os-instance_usage_audit_log/{id}", ""): FORBIDDEN,
    ("GET", "/os-hosts/{id}", ""): FORBIDDEN,
    ("PUT", "/os-hosts/{id}", ""): FORBIDDEN,
    ("GET", "/os-hosts/{id}/reboot", ""): FORBIDDEN,
    ("GET", "/os-hosts/{id}/shutdown", ""): FORBIDDEN,
    ("GET", "/os-hosts/{id}/startup", ""): FORBIDDEN,
    ("GET", "/servers/{server_id}/metadata", ""): NOT_FOUND,
    ("POST", "/servers/{server_id}/metadata", ""): NOT_FOUND,
    ("PUT", "/servers/{server_id}/metadata", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/metadata/{id}", ""): NOT_FOUND,
    ("PUT", "/servers/{server_id}/metadata/{id}", ""): NOT_FOUND,
    ("DELETE", "/servers/{server_id}/metadata/{id}", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/migrations", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/migrations/{id}", ""): NOT_FOUND,
    ("DELETE", "/servers/{server_id}/migrations/{id}", ""): NOT_FOUND,
    ("POST", "/servers/{server_id}/migrations/{id}/action", "force_complete"): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-instance-actions", ""): NOT_FOUND,
    ("GET", "/servers/{server_id}/os-instance-actions/{id}", ""): NOT_FOUND,
    # Tags: Nova reads the instance mapping (not project-scoped), then checks the policy
    # against the mapping's project.
    ("GET", "/servers/{server_id}/tags", ""): FORBIDDEN,
    ("PUT", "/servers/{server_id}/tags", ""): FORBIDDEN,
    ("DELETE", "/servers/{server_id}/tags", ""): FORBIDDEN,
    ("GET", "/servers/{server_id}/tags/{id}", ""): FORBIDDEN,
    ("PUT", "/servers/{server_id}/tags/{id}", ""): FORBIDDEN,
    ("DELETE", "/servers/{server_id}/tags/{id}", ""): FORBIDDEN,
    # Hyper-V's RDP console: Nova answers 400 to everyone, before any lookup.
    ("POST", ACTIONS_PATH, "os-getRDPConsole"): BAD,
    # Remote consoles: the legacy actions check the rule on B's own project first (a reader
    # may not), then look the server up; from 2.6 the lookup comes first.
    ("POST", ACTIONS_PATH, "os-getVNCConsole"): (NOT_FOUND, FORBIDDEN),
    ("POST", ACTIONS_PATH, "os-getSPICEConsole"): (NOT_FOUND, FORBIDDEN),
    ("POST", ACTIONS_PATH, "os-getSerialConsole"): (NOT_FOUND, FORBIDDEN),
    ("POST", "/servers/{server_id}/remote-consoles", ""): NOT_FOUND,
    # Console tokens are admin's to read (from 2.31; before it, and on /v2, a 400 to all).
    ("GET", "/os-console-auth-tokens/{id}", ""): FORBIDDEN,
}
# Where /v2 answers otherwise than the newest version.
LEGACY_EXPECT: dict[tuple[str, str, str], int | str] = {
    ("GET", "/os-console-auth-tokens/{id}", ""): BAD,
}
SERVER_ACTIONS = (
    "changePassword", "rescue", "unrescue",
    "addSecurityGroup", "removeSecurityGroup", "confirmResize", "createBackup", "createImage", "evacuate", "forceDelete", "injectNetworkInfo", "lock", "migrate",
    "os-getConsoleOutput", "os-migrateLive", "os-resetState", "os-start", "os-stop", "pause", "reboot", "rebuild",
    "resize", "restore", "resume", "revertResize", "shelve", "shelveOffload", "suspend", "trigger_crash_dump", "unlock",
    "unpause", "unshelve", "addFixedIp", "removeFixedIp", "addFloatingIp",
)  # fmt: skip
EXPECT.update({("POST", ACTIONS_PATH, action): NOT_FOUND for action in SERVER_ACTIONS})
EXPECT.update({("POST", BOOT_ACTIONS_PATH, action): NOT_FOUND for action in BOOT_ACTIONS})
EXPECT.update(
    {
        ("GET", "/os-volumes_boot", ""): SEEN,
        ("GET", "/os-volumes_boot/detail", ""): SEEN,
        ("POST", "/os-volumes_boot", ""): (SEEN, FORBIDDEN),
        ("GET", "/os-volumes_boot/{id}", ""): NOT_FOUND,
        ("PUT", "/os-volumes_boot/{id}", ""): NOT_FOUND,
        ("DELETE", "/os-volumes_boot/{id}", ""): NOT_FOUND,
    }
)
for (_path, _action), _body in list(ACTION_BODIES.items()):
    if _path == ACTIONS_PATH and _action in BOOT_ACTIONS:
        ACTION_BODIES[(BOOT_ACTIONS_PATH, _action)] = _body
BODIES[("POST", "/os-volumes_boot")] = BODIES[("POST", "/servers")]
BODIES[("PUT", "/os-volumes_boot/{id}")] = BODIES[("PUT", "/servers/{id}")]
LEGACY_BODIES[("POST", "/os-volumes_boot")] = LEGACY_BODIES[("POST", "/servers")]


def _expected(attempt: Attempt, role: str) -> int | str:
    if attempt.version == LEGACY and attempt.key in LEGACY_EXPECT:
        return LEGACY_EXPECT[attempt.key]
    wanted = EXPECT[attempt.key]
    if isinstance(wanted, tuple):
        return wanted[0] if role == "member" else wanted[1]
    return wanted


def _not_found_message(world: World, template: str, action: str = "") -> str:
    """Nova's 404 text for A's object named by ``template`` (and ``action``)."""
    proxies = {
        "/os-security-groups/{id}": f"Security group {world.secgroup} does not exist",
        "/os-security-group-rules": f"Security group {world.secgroup} does not exist",
        "/os-security-group-rules/{id}": f"Security group rule {world.rule} does not exist",
        "/os-floating-ips/{id}": f"Floating IP not found for ID {world.floating}",
    }
    if template in proxies:
        return proxies[template]
    if action == "removeFloatingIp":
        return f"Floating IP not found for address {world.floating_address}."
    if template.startswith(("/servers/", "/os-volumes_boot/")):
        return f"Instance {world.server} could not be found."
    if template.startswith("/os-server-groups/"):
        return f"Instance group {world.group} could not be found."
    if template.startswith("/flavors/"):
        return "Flavor alice-flavor could not be found."
    if template.startswith("/os-keypairs/"):
        return "Keypair alice-key not found for user bob"
    if template.startswith("/os-volumes/"):
        return f"Volume {world.volume} could not be found."
    if template.startswith("/os-snapshots/"):
        return f"Snapshot {world.snapshot} could not be found."
    if template == "/os-snapshots":
        return "Volume 5c1a7e7e-0000-4000-8000-00000000000c could not be found."
    return "Image not found."


def _leaks(world: World, text: str, asked: str = "") -> list[str]:
    """A's secrets found in a response body B received (other than those B's request named)."""
    return [
        name for name, secret in world.secrets.items() if secret in text and secret not in asked
    ]


def _crossing(api: ApiClient, world: World, attempt: Attempt, role: str) -> str | None:
    """What went wrong with B's attempt (None: isolated as Nova isolates)."""
    resp = _request(api, world, attempt, role)
    wanted = _expected(attempt, role)
    if wanted == SEEN:
        leaked = _leaks(world, resp.text, f"{resp.request.url} {resp.request.content!r}")
        return f"{resp.status_code} shows A's {leaked}" if leaked else None
    if resp.status_code != wanted:
        return f"{resp.status_code} (Nova: {wanted}): {resp.text[:200]}"
    (fault,) = resp.json().values()
    if wanted == NOT_FOUND and fault["message"] != _not_found_message(
        world, attempt.template, attempt.action
    ):
        return f"404 with message {fault['message']!r}"
    if wanted == FORBIDDEN and not fault["message"].startswith("Policy doesn't allow "):
        return f"403 with message {fault['message']!r}"
    return None


def _building_crossing(api: ApiClient, world: World, attempt: Attempt, role: str) -> str | None:
    """B on A's server that is still a build request: Nova refuses too (its build request
    lookup is not project-scoped, so it may answer 403 where OpenKeel answers 404)."""
    if not attempt.template.startswith("/servers/{"):
        return None
    resp = _request(api, dataclasses.replace(world, server=world.building), attempt, role)
    allowed = (BAD,) if _expected(attempt, role) == BAD else (FORBIDDEN, NOT_FOUND)
    if resp.status_code not in allowed:
        return f"{resp.status_code} (Nova: one of {allowed}): {resp.text[:200]}"
    return None


@pytest.fixture
def world(api: ApiClient, services: ApiServices) -> World:
    return _seed(api, services)


def test_every_route_is_classified() -> None:
    served = {attempt.key for attempt in _attempts()}
    templates = {attempt.template for attempt in _attempts()}
    assert not served - set(EXPECT), (
        f"routes without an isolation expectation: {served - set(EXPECT)}"
    )
    assert not set(EXPECT) - served, f"expectations of routes not served: {set(EXPECT) - served}"
    assert not templates - set(_paths(World())), "routes without a path to try"


def test_project_b_never_crosses_into_project_a(api: ApiClient, world: World) -> None:
    before = _snapshot(api, world)
    crossings = []
    by_key: dict[tuple[str, str, str], list[Attempt]] = {}
    for attempt in _attempts():
        by_key.setdefault(attempt.key, []).append(attempt)
    for key, attempts in sorted(by_key.items()):
        for attempt, role in itertools.product(attempts, ROLES):
            problem = _crossing(api, world, attempt, role)
            if problem:
                crossings.append(f"{role} {' '.join(key)} @{attempt.version}: {problem}")
            problem = _building_crossing(api, world, attempt, role)
            if problem:
                crossings.append(f"{role} {' '.join(key)} (building) @{attempt.version}: {problem}")
        if key[0] != "GET" or key == by_key_last(by_key):
            after = _snapshot(api, world)
            changed = [path for path in before if before[path] != after[path]]
            if changed:
                crossings.append(f"{' '.join(key)} changed A's {changed}")
                before = after
    crossings += [f"RPC naming A's objects: {call[:300]}" for call in _rpc_naming_a(world)]
    assert crossings == [], "\n".join(crossings)


def by_key_last(by_key: dict[tuple[str, str, str], list[Attempt]]) -> tuple[str, str, str]:
    """The last key tried (a GET changing A's objects shows at the latest there)."""
    return max(by_key)


def _uses(world: World) -> list[tuple[str, str, Any, str, int | str, str | None]]:
    """B naming A's objects in bodies and queries: (method, path, body, version, Nova's
    status or SEEN, Nova's message or None)."""
    sid, gid = world.server, world.group
    boot = {"name": "bob-vm", "imageRef": IMAGE, "flavorRef": "1", "networks": "none"}

    def booting(hints: Any = None, **server: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"server": {**boot, **server}}
        if hints:
            body["os:scheduler_hints"] = hints
        return body

    key = {"name": "bob-2", "user_id": "alice", "public_key": BOB_PUBLIC_KEY}
    queries = [
        "/servers/detail?all_tenants=1", "/servers/detail?project_id=proj-a",
        "/servers/detail?all_tenants=1&tenant_id=proj-a", "/servers?all_tenants=true&deleted=true",
        "/servers/detail?name=alice", f"/servers/detail?uuid={sid}", "/servers?user_id=alice",
        "/servers/detail?changes-since=2000-01-01T00:00:00Z", "/os-server-groups?all_projects=True",
        "/flavors/detail?is_public=None", "/flavors?is_public=false", "/images/detail?owner=proj-a",
        "/os-keypairs?limit=1000", "/limits", "/servers/detail?tags-any=alice-secret-tag",
        f"/servers/detail?ip={world.address}", "/servers?all_tenants=1&key_name=alice-key",
        f"/servers?marker={sid}", f"/servers/detail?limit=1&marker={world.building}",
        "/os-server-groups?all_projects=1&limit=1&offset=0",
    ]  # fmt: skip
    return [
        ("POST", "/servers", booting({"group": gid}), "2.104", BAD,
         f"Instance group {gid} could not be found."),
        ("POST", "/servers", booting(key_name="alice-key"), "2.104", BAD,
         "Invalid key_name provided."),
        ("POST", "/servers", booting(flavorRef="alice-flavor"), "2.104", BAD,
         "Flavor alice-flavor could not be found."),
        ("POST", "/servers", booting(imageRef=world.image), "2.104", BAD,
         "Can not find requested image"),
        # Neutron lists B only B's ports: Nova accepts (the build fails) and names no holder.
        ("POST", "/servers", booting(networks=[{"uuid": world.network, "fixed_ip": world.address}]),
         "2.104", SEEN, None),
        ("POST", "/os-keypairs", {"keypair": key}, "2.10", FORBIDDEN, None),
        # The public image is shared, not B's: Glance refuses B's changes.
        ("DELETE", f"/images/{IMAGE}", None, "2.35", FORBIDDEN,
         "You are not allowed to delete the image."),
        ("POST", f"/images/{IMAGE}/metadata", {"metadata": {"bob": "x"}}, "2.35", FORBIDDEN,
         f"Not authorized for image {IMAGE}."),
        ("GET", "/os-keypairs?user_id=alice", None, "2.10", FORBIDDEN, None),
        ("GET", "/os-keypairs/alice-key?user_id=alice", None, "2.10", FORBIDDEN, None),
        ("DELETE", "/os-keypairs/alice-key?user_id=alice", None, "2.10", FORBIDDEN, None),
        ("GET", "/limits?tenant_id=proj-a", None, "2.1", FORBIDDEN, None),
        ("GET", "/flavors?marker=alice-flavor", None, "2.1", BAD, "marker [alice-flavor] not found"),
        ("GET", "/os-quota-sets/proj-a?user_id=alice", None, "2.1", FORBIDDEN, None),
        ("POST", "/os-snapshots", {"snapshot": {"volume_id": world.volume}}, "2.35", NOT_FOUND,
         f"Volume {world.volume} could not be found."),
        ("POST", "/os-volumes", {"volume": {"size": 1, "snapshot_id": world.snapshot}}, "2.35",
         NOT_FOUND, f"Snapshot {world.snapshot} could not be found."),
    ] + [("GET", query, None, "2.104", SEEN, None) for query in queries]  # fmt: skip


def test_project_b_cannot_use_or_list_project_a_objects(api: ApiClient, world: World) -> None:
    before = _snapshot(api, world)
    bob = _ok(api.post("/v2.1/servers", json=BODIES[("POST", "/servers")], version="2.104",
                       token=BOB))["server"]["id"]  # fmt: skip
    crossings = []
    for method, path, body, version, wanted, message in _uses(world):
        for role, roles in ROLES.items():
            if (
                method == "POST"
                and path in ("/servers", "/os-volumes", "/os-snapshots")
                and (role == "reader")
            ):
                continue  # a reader may not create at all: nothing of A's is reached
            resp = api.request(method, f"/v2.1{path}", json=body, version=version, token=BOB,
                               headers={"X-Roles": roles})  # fmt: skip
            if wanted == SEEN:
                leaked = _leaks(world, resp.text, f"{path} {body}")
                problem = f"{resp.status_code} shows A's {leaked}" if leaked else None
            elif resp.status_code != wanted:
                problem = f"{resp.status_code} (Nova: {wanted}): {resp.text[:200]}"
            else:
                got = next(iter(resp.json().values()))["message"]
                problem = f"message {got!r}" if message and got != message else None
            if problem:
                crossings.append(f"{role} {method} {path}: {problem}")
    used = _ok(api.get("/v2.1/limits", token=BOB))["limits"]["absolute"]
    counted = {k: used[k] for k in ("totalInstancesUsed", "totalCoresUsed", "totalRAMUsed",
                                    "totalServerGroupsUsed", "maxTotalInstances")}  # fmt: skip
    mine = len(_ok(api.get("/v2.1/servers", token=BOB))["servers"])
    if counted != {"totalInstancesUsed": mine, "totalCoresUsed": mine, "totalRAMUsed": 512 * mine,
                   "totalServerGroupsUsed": 0, "maxTotalInstances": 10}:  # fmt: skip
        crossings.append(f"B's limits count A's usage or quota: {counted}")
    foreign = f"/v2.1/servers/{bob}/os-instance-actions/req-alice-secret"
    resp = api.get(foreign, token=BOB)
    if resp.status_code != NOT_FOUND:
        crossings.append(f"GET {foreign}: {resp.status_code} {resp.text[:200]}")
    crossings += [f"RPC naming A's objects: {call[:300]}" for call in _rpc_naming_a(world)]
    after = _snapshot(api, world)
    crossings += [f"A's {path} changed" for path in before if before[path] != after[path]]
    assert crossings == [], "\n".join(crossings)


def test_url_naming_another_project_is_refused(api: ApiClient) -> None:
    """``/v2.1/{project_id}/...`` URLs (project ids matching ``project_id_regex``) must name
    the caller's own project, as Nova checks."""
    for path in ("/v2.1/aaaa/servers", "/v2/aaaa/limits", "/v2.1/aaaa/os-quota-sets/aaaa"):
        resp = api.get(path, token="bob:bbbb", headers={"X-Roles": "member,reader"})
        assert resp.status_code == BAD, resp.text
        assert resp.json()["badRequest"]["message"] == (
            "Malformed request URL: URL's project_id 'aaaa' doesn't match Context's project_id "
            "'bbbb'"
        )
    assert api.get("/v2.1/bbbb/servers", token="bob:bbbb").status_code == 200
