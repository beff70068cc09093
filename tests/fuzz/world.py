"""The objects the fuzzer acts on (a server, a flavor, a key pair, a server group, an
aggregate ...) in one in-process cloud, and the concrete path of every route template.

``World.ensure`` runs before each route's fuzzing: a request of the previous route may have
deleted, stopped or resized something, so whatever is missing or not ACTIVE is made again
and stray servers are deleted (they would slow every list and exhaust the compute node).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from openkeel.api.usecases.images import image_service
from openkeel.db.image_catalog import DEFAULT_IMAGE
from tests.functional.conftest import IMAGE, Cloud

ADMIN = "admin:admin"
PROJECT = "admin"
FLAVOR = "fuzz-flavor"
KEYPAIR = "fuzz-key"
SPEC = ("hw:cpu_policy", "shared")
# Servers bounded (a fuzzed max_count builds up to the quota, and ensure() deletes them).
QUOTA = {"instances": 5, "cores": -1, "ram": -1, "server_groups": -1, "key_pairs": -1}


@dataclass
class World:
    """Ids of the objects in the cloud, filled in by ``ensure``."""

    cloud: Cloud
    host: str
    server: str = ""
    group: str = ""
    aggregate: int = 0
    hypervisor: str = ""
    service: str = ""
    request_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, method: str, path: str, **kw: Any) -> Any:
        """An admin request that must succeed; its JSON body (None when empty)."""
        resp = self.cloud.api.request(method, path, token=ADMIN, **kw)
        assert resp.status_code < 300, f"{method} {path}: {resp.status_code} {resp.text[:300]}"
        return resp.json() if resp.content else None

    def ensure(self) -> None:
        """Make every object exist again, the server ACTIVE and alone."""
        api = self.cloud.api
        self.call("PUT", f"/v2.1/os-quota-sets/{PROJECT}", json={"quota_set": QUOTA})
        self._ensure_flavor()
        if api.get(f"/v2.1/images/{IMAGE}", token=ADMIN).status_code == 404:
            image_service(self.cloud.services).add(DEFAULT_IMAGE)  # type: ignore[attr-defined]
        if api.get(f"/v2.1/os-keypairs/{KEYPAIR}", token=ADMIN).status_code != 200:
            self.call("POST", "/v2.1/os-keypairs", json={"keypair": {"name": KEYPAIR}})
        self._ensure_group()
        self._ensure_aggregate()
        self._ensure_server()
        for version, suffix in (("2.53", ""), ("2.1", "_v21")):
            found = self.call("GET", "/v2.1/os-hypervisors", version=version)["hypervisors"]
            self.extra["hypervisor" + suffix] = str(found[0]["id"])
            found = self.call("GET", "/v2.1/os-services", version=version)["services"]
            self.extra["service" + suffix] = str(found[0]["id"])
        self.hypervisor, self.service = self.extra["hypervisor"], self.extra["service"]

    def _ensure_flavor(self) -> None:
        api = self.cloud.api
        if api.get(f"/v2.1/flavors/{FLAVOR}", token=ADMIN).status_code != 200:
            body = {"name": FLAVOR, "ram": 64, "vcpus": 1, "disk": 1, "id": FLAVOR}
            self.call("POST", "/v2.1/flavors", json={"flavor": body})
        specs = {"extra_specs": dict([SPEC])}
        self.call("POST", f"/v2.1/flavors/{FLAVOR}/os-extra_specs", json=specs)

    def _ensure_group(self) -> None:
        api = self.cloud.api
        if self.group and api.get(f"/v2.1/os-server-groups/{self.group}").status_code == 200:
            return
        body = {"server_group": {"name": "fuzz-group", "policies": ["anti-affinity"]}}
        self.group = self.call("POST", "/v2.1/os-server-groups", json=body)["server_group"]["id"]

    def _ensure_aggregate(self) -> None:
        api = self.cloud.api
        if self.aggregate and api.get(f"/v2.1/os-aggregates/{self.aggregate}").status_code == 200:
            return
        name = f"fuzz-agg-{time.monotonic_ns()}"
        found = self.call("POST", "/v2.1/os-aggregates", json={"aggregate": {"name": name}})
        self.aggregate = found["aggregate"]["id"]

    def _ensure_server(self) -> None:
        api = self.cloud.api
        listed = self.call("GET", "/v2.1/servers?all_tenants=1")["servers"]
        for server in listed:
            if server["id"] != self.server:
                api.delete(f"/v2.1/servers/{server['id']}", token=ADMIN)
        for server in listed:
            if server["id"] != self.server:
                self.cloud.wait(server["id"], gone=True)
        if self.server:
            settled = self._settled(self.server)
            if settled is not None and settled["status"] == "ACTIVE" and not settled["locked"]:
                return
            api.post(f"/v2.1/servers/{self.server}/action", json={"forceDelete": None})
            api.delete(f"/v2.1/servers/{self.server}", token=ADMIN)
            self.cloud.wait(self.server, gone=True)
        extra = {"metadata": {"fuzz": "meta"}, "key_name": KEYPAIR}
        self.server = self.cloud.boot("fuzz-vm", **extra)["id"]
        self.cloud.wait(self.server)
        self.call("PUT", f"/v2.1/servers/{self.server}/tags/fuzz-tag", version="2.26")
        actions = self.call("GET", f"/v2.1/servers/{self.server}/os-instance-actions")
        self.request_id = actions["instanceActions"][0]["request_id"]

    def _settled(self, server_id: str) -> dict[str, Any] | None:
        """The server once no task runs on it (None when it is gone or never settles)."""
        try:
            server = self.cloud.wait(server_id, timeout=10)
        except AssertionError:
            return None
        locked = self.cloud.api.get(f"/v2.1/servers/{server_id}", version="2.9", token=ADMIN)
        server["locked"] = locked.status_code != 200 or locked.json()["server"]["locked"]
        return server

    def path(self, method: str, template: str, version: tuple[int, int]) -> str:
        """The concrete path of ``template`` at ``version`` (ids changed form at 2.53)."""
        old = version < (2, 53)
        if template == "/os-services/{id}":
            if method == "PUT" and old:
                return "/os-services/disable"
            return f"/os-services/{self.extra['service_v21' if old else 'service']}"
        if template in ("/os-hypervisors/{id}", "/os-hypervisors/{id}/uptime") and old:
            return template.replace("{id}", self.extra["hypervisor_v21"])
        known = self.paths().get(template)
        if known is not None:
            return known
        # Removed and not-built routes: the server where one is named, a uuid elsewhere.
        filled = template.replace("{server_id}", self.server)
        if filled.startswith("/servers/{id}"):
            filled = filled.replace("{id}", self.server, 1)
        return re.sub(r"\{\w+\}", "a3b1c2d4-0000-4000-8000-00000000f022", filled)

    def paths(self) -> dict[str, str]:
        """Each route template (without the mount) with this world's objects in it."""
        sid, agg = self.server, self.aggregate
        return {
            "/": "/",
            "/versions/{id}": "/versions/v2.1",
            "/extensions": "/extensions",
            "/extensions/{alias}": "/extensions/os-keypairs",
            "/flavors": "/flavors",
            "/flavors/detail": "/flavors/detail",
            "/flavors/{id}": f"/flavors/{FLAVOR}",
            "/flavors/{id}/action": f"/flavors/{FLAVOR}/action",
            "/flavors/{flavor_id}/os-extra_specs": f"/flavors/{FLAVOR}/os-extra_specs",
            "/flavors/{flavor_id}/os-extra_specs/{id}": (
                f"/flavors/{FLAVOR}/os-extra_specs/{SPEC[0]}"
            ),
            "/flavors/{flavor_id}/os-flavor-access": f"/flavors/{FLAVOR}/os-flavor-access",
            "/images": "/images",
            "/images/detail": "/images/detail",
            "/images/{id}": f"/images/{IMAGE}",
            "/images/{image_id}/metadata": f"/images/{IMAGE}/metadata",
            "/images/{image_id}/metadata/{id}": f"/images/{IMAGE}/metadata/fuzz",
            "/limits": "/limits",
            "/os-aggregates": "/os-aggregates",
            "/os-aggregates/{id}": f"/os-aggregates/{agg}",
            "/os-aggregates/{id}/action": f"/os-aggregates/{agg}/action",
            "/os-aggregates/{id}/images": f"/os-aggregates/{agg}/images",
            "/os-availability-zone": "/os-availability-zone",
            "/os-availability-zone/detail": "/os-availability-zone/detail",
            "/os-hypervisors": "/os-hypervisors",
            "/os-hypervisors/detail": "/os-hypervisors/detail",
            "/os-hypervisors/statistics": "/os-hypervisors/statistics",
            "/os-hypervisors/{id}": f"/os-hypervisors/{self.hypervisor}",
            "/os-hypervisors/{id}/search": f"/os-hypervisors/{self.host}/search",
            "/os-hypervisors/{id}/servers": f"/os-hypervisors/{self.host}/servers",
            "/os-hypervisors/{id}/uptime": f"/os-hypervisors/{self.hypervisor}/uptime",
            "/os-keypairs": "/os-keypairs",
            "/os-keypairs/{id}": f"/os-keypairs/{KEYPAIR}",
            "/os-migrations": "/os-migrations",
            "/os-quota-class-sets/{id}": "/os-quota-class-sets/default",
            "/os-quota-sets/{id}": f"/os-quota-sets/{PROJECT}",
            "/os-quota-sets/{id}/defaults": f"/os-quota-sets/{PROJECT}/defaults",
            "/os-quota-sets/{id}/detail": f"/os-quota-sets/{PROJECT}/detail",
            "/os-server-groups": "/os-server-groups",
            "/os-server-groups/{id}": f"/os-server-groups/{self.group}",
            "/os-services": "/os-services",
            "/os-services/{id}": f"/os-services/{self.service}",
            "/servers": "/servers",
            "/servers/detail": "/servers/detail",
            "/servers/{id}": f"/servers/{sid}",
            "/servers/{id}/action": f"/servers/{sid}/action",
            "/servers/{server_id}/ips": f"/servers/{sid}/ips",
            "/servers/{server_id}/ips/{id}": f"/servers/{sid}/ips/private",
            "/servers/{server_id}/os-server-password": f"/servers/{sid}/os-server-password",
            "/servers/{server_id}/topology": f"/servers/{sid}/topology",
            "/servers/{server_id}/metadata": f"/servers/{sid}/metadata",
            "/servers/{server_id}/metadata/{id}": f"/servers/{sid}/metadata/fuzz",
            "/servers/{server_id}/migrations": f"/servers/{sid}/migrations",
            "/servers/{server_id}/migrations/{id}": f"/servers/{sid}/migrations/1",
            "/servers/{server_id}/migrations/{id}/action": f"/servers/{sid}/migrations/1/action",
            "/servers/{server_id}/os-instance-actions": f"/servers/{sid}/os-instance-actions",
            "/servers/{server_id}/os-instance-actions/{id}": (
                f"/servers/{sid}/os-instance-actions/{self.request_id}"
            ),
            "/servers/{server_id}/tags": f"/servers/{sid}/tags",
            "/servers/{server_id}/tags/{id}": f"/servers/{sid}/tags/fuzz-tag",
        }
