"""Which request reproduces each Nova API sample, and the state it needs first.

Read by tests/conformance/test_samples.py. Each :class:`Case` names a ``-resp.json`` sample
under ../shared/spec/nova-api-samples/, the request Nova's functional api_sample_tests made to
produce it (method, path, microversion from the ``v2.N/`` folder, request sample) and setup
steps (flavors and keypairs created through our API beforehand).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# shared/ lies beside the repository clone (here and in CI).
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "spec" / "nova-api-samples"


def load(name: str) -> Any:
    """A sample's JSON."""
    return json.loads((SAMPLES / name).read_text())


@dataclass(frozen=True)
class Step:
    """One setup request (admin)."""

    method: str
    path: str
    body: Any = None
    version: str | None = None


@dataclass(frozen=True)
class Case:
    """How to replay one response sample."""

    resp: str
    method: str
    path: str
    req: str | None = None
    payload: Any = None  # a request body differing from the request sample
    setup: tuple[Step, ...] = ()
    token: str | None = "admin:admin"
    free: frozenset[str] = frozenset()  # keys whose values are host-dependent maps

    @property
    def version(self) -> str | None:
        folder = Path(self.resp).parent.name
        return folder[1:] if folder.startswith("v2.") else None

    @property
    def body(self) -> Any:
        if self.payload is not None:
            return self.payload
        return load(self.req) if self.req else None


def _flavor_catalog() -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in load("flavors/v2.61/flavors-detail-resp.json")["flavors"]}


def seed_flavor(flavor_id: str) -> tuple[Step, ...]:
    """Create one of the flavors of Nova's samples (with its description and extra specs)."""
    f = _flavor_catalog()[flavor_id]
    body = {
        "flavor": {
            "id": f["id"],
            "name": f["name"],
            "ram": f["ram"],
            "vcpus": f["vcpus"],
            "disk": f["disk"],
            "OS-FLV-EXT-DATA:ephemeral": f["OS-FLV-EXT-DATA:ephemeral"],
            "swap": f["swap"] or 0,
            "rxtx_factor": f["rxtx_factor"],
            "os-flavor-access:is_public": f["os-flavor-access:is_public"],
            "description": f["description"],
        }
    }
    steps = [Step("POST", "/v2.1/flavors", body, "2.55")]
    if f["extra_specs"]:
        steps.append(
            Step(
                "POST",
                f"/v2.1/flavors/{flavor_id}/os-extra_specs",
                {"extra_specs": f["extra_specs"]},
            )
        )
    return tuple(steps)


def seed_flavors_of(sample: str) -> tuple[Step, ...]:
    """Create every flavor a flavor sample shows."""
    body = load(sample)
    flavors = body["flavors"] if "flavors" in body else [body["flavor"]]
    return tuple(step for f in flavors for step in seed_flavor(f["id"]))


def _flavor_cases() -> list[Case]:
    cases = []
    for folder in ("flavors", "flavors/v2.55", "flavors/v2.61", "flavors/v2.75", "flavors/v2.102"):
        get = f"{folder}/flavor-get-resp.json"
        flavor_id = load(get)["flavor"]["id"]
        cases += [
            Case(get, "GET", f"/v2.1/flavors/{flavor_id}", setup=seed_flavors_of(get)),
            Case(
                f"{folder}/flavors-list-resp.json",
                "GET",
                "/v2.1/flavors",
                setup=seed_flavors_of(f"{folder}/flavors-detail-resp.json"),
            ),
            Case(
                f"{folder}/flavors-detail-resp.json",
                "GET",
                "/v2.1/flavors/detail",
                setup=seed_flavors_of(f"{folder}/flavors-detail-resp.json"),
            ),
        ]
    for folder in ("flavor-manage", *(f"flavor-manage/v2.{n}" for n in (55, 61, 75, 102))):
        cases.append(
            Case(
                f"{folder}/flavor-create-post-resp.json",
                "POST",
                "/v2.1/flavors",
                req=f"{folder}/flavor-create-post-req.json",
            )
        )
        if folder != "flavor-manage":
            cases.append(
                Case(
                    f"{folder}/flavor-update-resp.json",
                    "PUT",
                    "/v2.1/flavors/1",
                    req=f"{folder}/flavor-update-req.json",
                    setup=seed_flavor("1"),
                )
            )
    return cases


_SPECS = "flavor-extra-specs"
_ACCESS = "flavor-access"
_GRANT = Step(
    "POST",
    "/v2.1/flavors/10/action",
    {"addTenantAccess": {"tenant": "6f70656e737461636b20342065766572"}},
)


def _flavor_detail_cases() -> list[Case]:
    spec = "/v2.1/flavors/1/os-extra_specs"
    specs_seed = (
        *seed_flavor("1"),
        Step("POST", spec, load(f"{_SPECS}/flavor-extra-specs-create-req.json")),
    )
    private = (Step("POST", "/v2.1/flavors", load(f"{_ACCESS}/flavor-create-req.json")),)
    return [
        Case(
            f"{_SPECS}/flavor-extra-specs-create-resp.json",
            "POST",
            spec,
            req=f"{_SPECS}/flavor-extra-specs-create-req.json",
            setup=seed_flavor("1"),
        ),
        Case(
            f"{_SPECS}/flavor-extra-specs-get-resp.json",
            "GET",
            f"{spec}/hw:numa_nodes",
            setup=specs_seed,
        ),
        Case(f"{_SPECS}/flavor-extra-specs-list-resp.json", "GET", spec, setup=specs_seed),
        Case(
            f"{_SPECS}/flavor-extra-specs-update-resp.json",
            "PUT",
            f"{spec}/hw:numa_nodes",
            req=f"{_SPECS}/flavor-extra-specs-update-req.json",
            setup=specs_seed,
        ),
        # Nova's test grants its own project (a "fake_tenant" grant fails Nova's response schema).
        Case(
            f"{_ACCESS}/flavor-access-add-tenant-resp.json",
            "POST",
            "/v2.1/flavors/10/action",
            payload=_GRANT.body,
            setup=private,
        ),
        Case(
            f"{_ACCESS}/flavor-access-list-resp.json",
            "GET",
            "/v2.1/flavors/10/os-flavor-access",
            setup=(*private, _GRANT),
        ),
        Case(
            f"{_ACCESS}/flavor-access-remove-tenant-resp.json",
            "POST",
            "/v2.1/flavors/10/action",
            setup=(*private, _GRANT),
            payload={"removeTenantAccess": {"tenant": "6f70656e737461636b20342065766572"}},
        ),
    ]


_KP = "os-keypairs"
_KP_NAME = "keypair-5d935425-31d5-48a7-a0f1-e76e9813f2c3"


def _keypair(name: str, version: str | None, user: str | None = None) -> Step:
    body: dict[str, Any] = {"name": name}
    if version is not None:
        body["type"] = "ssh"
    if user is not None:
        body["user_id"] = user
    return Step("POST", "/v2.1/os-keypairs", {"keypair": body}, version)


def _keypair_cases() -> list[Case]:
    cases = []
    for folder, version in ((_KP, None), (f"{_KP}/v2.2", "2.2"), (f"{_KP}/v2.10", "2.10")):
        seed = (_keypair(_KP_NAME, version),)
        cases += [
            Case(
                f"{folder}/keypairs-post-resp.json",
                "POST",
                "/v2.1/os-keypairs",
                req=f"{folder}/keypairs-post-req.json",
            ),
            Case(
                f"{folder}/keypairs-import-post-resp.json",
                "POST",
                "/v2.1/os-keypairs",
                req=f"{folder}/keypairs-import-post-req.json",
            ),
            Case(
                f"{folder}/keypairs-get-resp.json",
                "GET",
                f"/v2.1/os-keypairs/{_KP_NAME}",
                setup=seed,
            ),
            Case(f"{folder}/keypairs-list-resp.json", "GET", "/v2.1/os-keypairs", setup=seed),
        ]
    v235 = f"{_KP}/v2.35"
    three = tuple(_keypair(f"keypair-{c}", "2.35") for c in "abc")
    users = tuple(_keypair(f"keypair-{c}", "2.35", u) for u in ("user1", "user2") for c in "abc")
    cases += [
        Case(
            f"{v235}/keypairs-post-resp.json",
            "POST",
            "/v2.1/os-keypairs",
            req=f"{v235}/keypairs-post-req.json",
        ),
        Case(
            f"{v235}/keypairs-list-resp.json",
            "GET",
            "/v2.1/os-keypairs?marker=keypair-a&limit=1",
            setup=three,
        ),
        Case(
            f"{v235}/keypairs-list-user1-resp.json",
            "GET",
            "/v2.1/os-keypairs?user_id=user1&marker=keypair-b",
            setup=users,
        ),
        Case(
            f"{v235}/keypairs-list-user2-resp.json",
            "GET",
            "/v2.1/os-keypairs?user_id=user2&marker=keypair-a&limit=1",
            setup=users,
        ),
        Case(
            f"{_KP}/v2.92/keypairs-import-post-resp.json",
            "POST",
            "/v2.1/os-keypairs",
            req=f"{_KP}/v2.92/keypairs-import-post-req.json",
        ),
    ]
    return cases


def _quota_cases() -> list[Case]:
    cases = []
    qs = "/v2.1/os-quota-sets/fake_tenant"
    for folder in ("os-quota-sets", "os-quota-sets/v2.36", "os-quota-sets/v2.57"):
        cases += [
            Case(f"{folder}/quotas-show-get-resp.json", "GET", qs),
            Case(f"{folder}/quotas-show-defaults-get-resp.json", "GET", f"{qs}/defaults"),
            Case(f"{folder}/quotas-show-detail-get-resp.json", "GET", f"{qs}/detail"),
            Case(f"{folder}/user-quotas-show-get-resp.json", "GET", f"{qs}?user_id=1"),
            Case(
                f"{folder}/quotas-update-post-resp.json",
                "PUT",
                qs,
                req=f"{folder}/quotas-update-post-req.json",
            ),
            Case(
                f"{folder}/quotas-update-force-post-resp.json",
                "PUT",
                qs,
                req=f"{folder}/quotas-update-force-post-req.json",
            ),
            Case(
                f"{folder}/user-quotas-update-post-resp.json",
                "PUT",
                f"{qs}?user_id=1",
                req=f"{folder}/user-quotas-update-post-req.json",
            ),
        ]
    for folder in ("os-quota-class-sets", "os-quota-class-sets/v2.50", "os-quota-class-sets/v2.57"):
        show = f"{folder}/quota-classes-show-get-resp.json"
        path = f"/v2.1/os-quota-class-sets/{load(show)['quota_class_set']['id']}"
        cases += [
            Case(show, "GET", path),
            Case(
                f"{folder}/quota-classes-update-post-resp.json",
                "PUT",
                "/v2.1/os-quota-class-sets/test_class",
                req=f"{folder}/quota-classes-update-post-req.json",
            ),
        ]
    return cases


def _other_cases() -> list[Case]:
    return [
        *(
            Case(f"limits/{v}limit-get-resp.json", "GET", "/v2.1/limits")
            for v in ("", "v2.36/", "v2.39/", "v2.57/")
        ),
        Case(
            "os-availability-zone/availability-zone-list-resp.json",
            "GET",
            "/v2.1/os-availability-zone",
            free=frozenset({"hosts"}),
        ),
        Case(
            "os-availability-zone/availability-zone-detail-resp.json",
            "GET",
            "/v2.1/os-availability-zone/detail",
            free=frozenset({"hosts"}),
        ),
        Case("versions/versions-get-resp.json", "GET", "/", token=None),
        Case("versions/v21-version-get-resp.json", "GET", "/v2.1/"),
        Case("versions/v2-version-get-resp.json", "GET", "/v2/"),
        Case("extension-info/extensions-list-resp.json", "GET", "/v2.1/extensions"),
        Case("extension-info/extensions-list-resp-v21-compatible.json", "GET", "/v2/extensions"),
        Case("extension-info/extensions-get-resp.json", "GET", "/v2.1/extensions/os-agents"),
    ]


def _aggregate_cases() -> list[Case]:
    # add_host/remove_host need a compute service row in a cell DB, which no API call creates.
    cases: list[Case] = []
    for v in ("", "v2.41/", "v2.81/"):
        folder = f"os-aggregates/{v}"
        version = v[1:-1] if v else None
        create = (
            Step("POST", "/v2.1/os-aggregates", load(f"{folder}aggregate-post-req.json"), version),
        )
        cases += [
            Case(f"{folder}aggregate-post-resp.json", "POST", "/v2.1/os-aggregates",
                 f"{folder}aggregate-post-req.json"),
            Case(f"{folder}aggregates-get-resp.json", "GET", "/v2.1/os-aggregates/1", setup=create),
            Case(f"{folder}aggregates-list-get-resp.json", "GET", "/v2.1/os-aggregates",
                 setup=create, free=frozenset({"hosts"})),
            Case(f"{folder}aggregate-update-post-resp.json", "PUT", "/v2.1/os-aggregates/1",
                 f"{folder}aggregate-update-post-req.json", setup=create),
            Case(f"{folder}aggregates-metadata-post-resp.json", "POST",
                 "/v2.1/os-aggregates/1/action", f"{folder}aggregate-metadata-post-req.json",
                 setup=create),
        ]  # fmt: skip
    return cases


def _server_group_cases() -> list[Case]:
    cases: list[Case] = []
    for v in ("", "v2.13/", "v2.64/"):
        folder = f"os-server-groups/{v}"
        version = v[1:-1] if v else None
        body = load(f"{folder}server-groups-post-req.json")
        if "rules" in body["server_group"]:
            # max_server_per_host > 1 needs a nova-compute of version 33+ registered.
            body["server_group"]["rules"] = {"max_server_per_host": 1}
        create = (Step("POST", "/v2.1/os-server-groups", body, version),)
        cases += [
            Case(f"{folder}server-groups-post-resp.json", "POST", "/v2.1/os-server-groups",
                 payload=body),
            Case(f"{folder}server-groups-list-resp.json", "GET", "/v2.1/os-server-groups",
                 setup=create),
        ]  # fmt: skip
    return cases


def all_cases() -> list[Case]:
    """Every replayable sample of the resources under test."""
    if not SAMPLES.is_dir():
        return []
    return [
        *_flavor_cases(),
        *_flavor_detail_cases(),
        *_keypair_cases(),
        *_quota_cases(),
        *_other_cases(),
        *_image_cases(),
        *_aggregate_cases(),
        *_server_group_cases(),
        *_server_cases(),
    ]


# The embedded catalog's default image (openkeel.db.image_catalog.DEFAULT_IMAGE).
_IMAGE = "/v2.1/images/f889e72b-5f7e-546f-a852-ffb79bfbb64f"


def _image_meta(sample: str, items: dict[str, Any] | None = None) -> tuple[Step, ...]:
    """Give the default image the properties a sample shows."""
    body = load(sample)
    if items is None:
        items = body["image"]["metadata"] if "image" in body else body["images"][0]["metadata"]
    return (Step("PUT", f"{_IMAGE}/metadata", {"metadata": items}),)


def _image_cases() -> list[Case]:
    meta = load("images/image-metadata-get-resp.json")["metadata"]
    seeded = (Step("PUT", f"{_IMAGE}/metadata", {"metadata": meta}),)
    return [
        Case("images/images-list-get-resp.json", "GET", "/v2.1/images"),
        Case(
            "images/images-details-get-resp.json",
            "GET",
            "/v2.1/images/detail",
            setup=_image_meta("images/images-details-get-resp.json"),
        ),
        Case("images/image-get-resp.json", "GET", _IMAGE, setup=seeded),
        Case("images/image-metadata-get-resp.json", "GET", f"{_IMAGE}/metadata", setup=seeded),
        Case(
            "images/image-metadata-post-resp.json",
            "POST",
            f"{_IMAGE}/metadata",
            req="images/image-metadata-post-req.json",
            setup=seeded,
        ),
        Case(
            "images/image-metadata-put-resp.json",
            "PUT",
            f"{_IMAGE}/metadata",
            req="images/image-metadata-put-req.json",
            setup=seeded,
        ),
        Case("images/image-meta-key-get.json", "GET", f"{_IMAGE}/metadata/kernel_id", setup=seeded),
        Case(
            "images/image-meta-key-put-resp.json",
            "PUT",
            f"{_IMAGE}/metadata/auto_disk_config",
            req="images/image-meta-key-put-req.json",
            setup=seeded,
        ),
    ]


# Servers: only the API role runs here, so a server stays in BUILD (no host, addresses,
# launch time or volumes). Those build-dependent values are compared by key only.
_BUILD_DEPENDENT = frozenset(
    {
        "addresses", "OS-SRV-USG:launched_at", "OS-EXT-STS:task_state", "OS-EXT-STS:vm_state",
        "OS-EXT-STS:power_state", "os-extended-volumes:volumes_attached", "hostId",
        "OS-EXT-SRV-ATTR:host", "OS-EXT-SRV-ATTR:hypervisor_hostname",
        "OS-EXT-SRV-ATTR:root_device_name", "OS-EXT-SRV-ATTR:instance_name", "status",
        "host_status", "updated",
        # Nullable strings the samples' scenarios happened to set (locked server, description).
        "OS-EXT-SRV-ATTR:user_data", "description", "locked_reason", "pinned_availability_zone",
        "image",  # its properties (2.98) are those of the image booted
    }
)  # fmt: skip
_SERVER_FOLDERS = ("", *(f"v2.{n}/" for n in (19, 37, 47, 52, 57, 63, 66, 69, 71, 73, 90, 94, 100)))


def _server_payload(folder: str) -> Any:
    body = load(f"servers/{folder}server-create-req.json")
    server = body["server"]
    server["imageRef"] = _IMAGE.rsplit("/", 1)[-1]
    version = folder[1:-1] if folder else "2.1"
    if tuple(map(int, version.split("."))) >= (2, 57):
        server.pop("personality", None)
    if tuple(map(int, version.split("."))) >= (2, 37):
        server.setdefault("networks", "auto")
    server.pop("availability_zone", None)  # "us-west" needs a compute service in that zone
    for hints in ("os:scheduler_hints", "OS-SCH-HNT:scheduler_hints"):
        body.get(hints, {}).pop("group", None)  # the samples' group does not exist here
    return body


def _server_cases() -> list[Case]:
    cases: list[Case] = []
    for folder in _SERVER_FOLDERS:
        version = folder[1:-1] if folder else None
        payload = _server_payload(folder)
        flavor = seed_flavor(str(payload["server"]["flavorRef"]).rsplit("/", 1)[-1])
        create = (*flavor, Step("POST", "/v2.1/servers", payload, version))
        cases.append(
            Case(f"servers/{folder}server-create-resp.json", "POST", "/v2.1/servers",
                 payload=payload, setup=flavor)
        )  # fmt: skip
        for name, path in (
            ("servers-list", "/v2.1/servers"),
            ("servers-details", "/v2.1/servers/detail"),
        ):
            sample = f"servers/{folder}{name}-resp.json"
            if not (SAMPLES / sample).exists() or folder == "v2.69/":
                continue  # 2.69's list samples show servers of a down cell
            body = load(sample)
            query = "?limit=1" if "servers_links" in body else ""
            # Samples without the admin-only attributes were made by a project member.
            admin = (
                any("OS-EXT-SRV-ATTR:host" in s for s in body["servers"]) or name == "servers-list"
            )
            cases.append(
                Case(sample, "GET", path + query, setup=create, free=_BUILD_DEPENDENT,
                     token="admin:admin" if admin else "demo:admin")
            )  # fmt: skip
    return cases + _multiple_create_cases()


def _multiple_create_cases() -> list[Case]:
    cases: list[Case] = []
    for name in ("multiple-create-post", "multiple-create-no-resv-post"):
        payload = load(f"os-multiple-create/{name}-req.json")
        payload["server"]["imageRef"] = _IMAGE.rsplit("/", 1)[-1]
        cases.append(
            Case(f"os-multiple-create/{name}-resp.json", "POST", "/v2.1/servers",
                 payload=payload, setup=seed_flavor("1"))
        )  # fmt: skip
    create = (*seed_flavor("1"), Step("POST", "/v2.1/servers", _server_payload("")))
    cases.append(
        Case("servers-sort/server-sort-keys-list-resp.json", "GET",
             "/v2.1/servers?sort_key=display_name&sort_dir=asc", setup=create)
    )  # fmt: skip
    return cases
