"""Valid request bodies, one list of candidates per route: the first one the route's schema
accepts at the requested microversion is the seed every mutation starts from.

Written by hand because a valid body must also name real objects (the world's server, flavor,
host ...); the schema picks the candidate, so one list serves every microversion window.
"""

from __future__ import annotations

from typing import Any

from tests.functional.conftest import IMAGE
from tests.fuzz.world import FLAVOR, SPEC, World

SERVERS = "/servers/{id}/action"


def candidates(world: World, method: str, template: str, action: str) -> list[Any]:
    """Bodies to try in order (an empty list: the route takes no body)."""
    if action:
        return [{action: inner} for inner in _action_bodies(world, template, action)]
    return _bodies(world).get((method, template), [])


def _bodies(world: World) -> dict[tuple[str, str], list[Any]]:
    server = {"name": "fuzz-new", "imageRef": IMAGE, "flavorRef": "1"}
    return {
        ("POST", "/flavors"): [{"flavor": {"name": "fz", "ram": 64, "vcpus": 1, "disk": 1}}],
        ("PUT", "/flavors/{id}"): [{"flavor": {"description": "fuzzed"}}],
        ("POST", "/flavors/{flavor_id}/os-extra_specs"): [{"extra_specs": dict([SPEC])}],
        ("PUT", "/flavors/{flavor_id}/os-extra_specs/{id}"): [{SPEC[0]: "dedicated"}],
        ("POST", "/images/{image_id}/metadata"): [{"metadata": {"fuzz": "x"}}],
        ("PUT", "/images/{image_id}/metadata"): [{"metadata": {"fuzz": "x"}}],
        ("PUT", "/images/{image_id}/metadata/{id}"): [{"meta": {"fuzz": "y"}}],
        ("POST", "/os-aggregates"): [{"aggregate": {"name": "fuzz-agg", "availability_zone": "z"}}],
        ("PUT", "/os-aggregates/{id}"): [{"aggregate": {"name": "fuzz-agg-renamed"}}],
        ("POST", "/os-aggregates/{id}/images"): [{"cache": [{"id": IMAGE}]}],
        ("POST", "/os-keypairs"): [
            {"keypair": {"name": "fuzz-key2", "type": "ssh"}},
            {"keypair": {"name": "fuzz-key2"}},
            {"keypair": {"name": "fuzz-key2", "public_key": world.extra.get("public_key", "")}},
        ],
        ("PUT", "/os-quota-class-sets/{id}"): [{"quota_class_set": {"instances": 50}}],
        ("PUT", "/os-quota-sets/{id}"): [{"quota_set": {"instances": -1, "force": True}}],
        ("POST", "/os-server-groups"): [
            {"server_group": {"name": "fuzz-g", "policies": ["affinity"]}},
            {"server_group": {"name": "fuzz-g", "policy": "anti-affinity", "rules": {}}},
        ],
        ("PUT", "/os-services/{id}"): [
            {"host": world.host, "binary": "nova-compute"},
            {"status": "enabled"},
        ],
        ("POST", "/servers"): [
            {"server": server},
            {"server": {**server, "networks": "none"}},
        ],
        ("PUT", "/servers/{id}"): [{"server": {"name": "fuzz-vm"}}],
        ("POST", "/servers/{server_id}/metadata"): [{"metadata": {"fuzz2": "x"}}],
        ("PUT", "/servers/{server_id}/metadata"): [{"metadata": {"fuzz": "meta"}}],
        ("PUT", "/servers/{server_id}/metadata/{id}"): [{"meta": {"fuzz": "meta"}}],
        ("PUT", "/servers/{server_id}/tags"): [{"tags": ["fuzz-tag"]}],
    }


def _action_bodies(world: World, template: str, action: str) -> list[Any]:
    by_action: dict[tuple[str, str], list[Any]] = {
        ("/flavors/{id}/action", "addTenantAccess"): [{"tenant": "fuzz-project"}],
        ("/flavors/{id}/action", "removeTenantAccess"): [{"tenant": "fuzz-project"}],
        ("/os-aggregates/{id}/action", "add_host"): [{"host": world.host}],
        ("/os-aggregates/{id}/action", "remove_host"): [{"host": world.host}],
        ("/os-aggregates/{id}/action", "set_metadata"): [{"metadata": {"fuzz": "x"}}],
        (SERVERS, "createImage"): [{"name": "fuzz-snap", "metadata": {"k": "v"}}],
        (SERVERS, "createBackup"): [{"name": "fuzz-backup", "backup_type": "daily", "rotation": 1}],
        (SERVERS, "os-migrateLive"): [
            {"host": None, "block_migration": "auto"},
            {"host": None, "block_migration": False, "disk_over_commit": False},
        ],
        (SERVERS, "os-resetState"): [{"state": "active"}],
        (SERVERS, "reboot"): [{"type": "SOFT"}],
        (SERVERS, "rebuild"): [{"imageRef": IMAGE, "name": "fuzz-vm"}],
        (SERVERS, "resize"): [{"flavorRef": FLAVOR}],
        (SERVERS, "migrate"): [None, {"host": None}],
        (SERVERS, "lock"): [None, {"locked_reason": "fuzz"}],
        (SERVERS, "os-getRDPConsole"): [{"type": "rdp-html5"}],
    }
    return by_action.get((template, action), [None])
