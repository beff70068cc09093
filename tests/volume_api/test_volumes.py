"""Volumes through the embedded volume API: lifecycle, microversions, visibility, actions,
errors and quotas as Cinder answers them; the data is a sparse file."""

from __future__ import annotations

from pathlib import Path

from tests.client import ApiClient
from tests.volume_api.conftest import V3, Cinder, error


def test_versions_and_microversion_negotiation(client: ApiClient, demo: Cinder) -> None:
    root = client.request("GET", "/volume/", token=None)
    assert root.status_code == 300
    [v3] = root.json()["versions"]
    assert (v3["id"], v3["min_version"], v3["version"]) == ("v3.0", "3.0", "3.70")
    assert client.request("GET", V3 + "/", token=None).json()["versions"] == [v3]
    resp = demo("GET", "/volumes", version="latest")
    assert resp.headers["OpenStack-API-Version"] == "volume 3.70"
    assert "OpenStack-API-Version" in resp.headers["Vary"]
    plain = client.request("GET", V3 + "/volumes", token="demo:demo")
    assert plain.headers["OpenStack-API-Version"] == "volume 3.0"
    assert "is not supported by the API" in error(demo("GET", "/volumes", version="3.99"), 406)
    assert "invalid format" in error(demo("GET", "/volumes", version="3.x"), 400)


def test_lifecycle_blank_volume(demo: Cinder, tmp_path: Path) -> None:
    resp = demo("POST", "/volumes", {"volume": {"size": 2, "name": "data",
                                                "metadata": {"k": "v"}}})  # fmt: skip
    assert resp.status_code == 202
    created = resp.json()["volume"]
    assert created["status"] == "creating" and created["size"] == 2
    shown = demo("GET", f"/volumes/{created['id']}").json()["volume"]
    assert shown["status"] == "available" and shown["bootable"] == "false"
    assert shown["volume_type"] == "__DEFAULT__" and shown["metadata"] == {"k": "v"}
    assert "os-vol-host-attr:host" not in shown
    data = tmp_path / "volumes" / created["id"]
    assert data.stat().st_size == 2 * 1024**3 and data.stat().st_blocks == 0
    # Project-scoped URLs reach the same service.
    assert demo("GET", f"/{'d' * 32}/volumes/{created['id']}").status_code == 200
    summary = demo("GET", "/volumes").json()["volumes"]
    assert summary == [{"id": created["id"], "name": "data", "links": shown["links"]}]
    updated = demo("PUT", f"/volumes/{created['id']}", {"volume": {"name": "renamed"}})
    assert updated.json()["volume"]["name"] == "renamed"
    assert demo("POST", f"/volumes/{created['id']}/action",
                {"os-extend": {"new_size": 3}}).status_code == 202  # fmt: skip
    assert demo("GET", f"/volumes/{created['id']}").json()["volume"]["size"] == 3
    assert data.stat().st_size == 3 * 1024**3
    msg = error(demo("POST", f"/volumes/{created['id']}/action",
                     {"os-extend": {"new_size": 2}}), 400)  # fmt: skip
    assert "New size for extend must be greater than current size" in msg
    assert demo("POST", f"/volumes/{created['id']}/action",
                {"os-set_bootable": {"bootable": True}}).status_code == 200  # fmt: skip
    assert demo("GET", f"/volumes/{created['id']}").json()["volume"]["bootable"] == "true"
    assert demo("DELETE", f"/volumes/{created['id']}").status_code == 202
    assert "could not be found" in error(demo("GET", f"/volumes/{created['id']}"), 404)
    assert not data.exists()


def test_filters_paging_and_visibility(admin: Cinder, demo: Cinder, other: Cinder) -> None:
    first = demo.volume(name="one", metadata={"tier": "gold"})
    second = demo.volume(name="two")
    theirs = other.volume(name="theirs")
    names = [v["name"] for v in demo("GET", "/volumes/detail").json()["volumes"]]
    assert names == ["two", "one"]  # newest first
    assert [v["id"] for v in demo("GET", "/volumes/detail?name=one").json()["volumes"]] == [
        first["id"]
    ]
    by_meta = demo("GET", "/volumes/detail?metadata={'tier':'gold'}").json()["volumes"]
    assert [v["id"] for v in by_meta] == [first["id"]]
    page = demo("GET", "/volumes?limit=1").json()
    assert [v["id"] for v in page["volumes"]] == [second["id"]]
    assert "marker=" + second["id"] in page["volumes_links"][0]["href"]
    assert error(demo("GET", f"/volumes/{theirs['id']}"), 404)
    assert error(demo("DELETE", f"/volumes/{theirs['id']}"), 404)
    every = admin("GET", "/volumes/detail?all_tenants=1").json()["volumes"]
    assert {v["id"] for v in every} == {first["id"], second["id"], theirs["id"]}
    assert "os-vol-host-attr:host" in every[0]
    assert admin("GET", "/volumes").json()["volumes"] == []


def test_create_errors(demo: Cinder) -> None:
    assert "Missing required element 'volume'" in error(demo("POST", "/volumes", {}), 400)
    assert error(demo("POST", "/volumes", {"volume": {"size": "x"}}), 400)
    assert error(demo("POST", "/volumes", {"volume": {"size": 0}}), 400)
    assert "Size must be specified" in error(demo("POST", "/volumes", {"volume": {}}), 400)
    assert error(demo("POST", "/volumes", {"volume": {"size": 1, "bogus": 1}}), 400)
    missing = demo("POST", "/volumes", {"volume": {"size": 1, "imageRef": "nope"}})
    assert "Invalid image identifier" in error(missing, 400)
    ghost = demo("POST", "/volumes", {"volume": {"snapshot_id": "0" * 32}})
    assert "could not be found" in error(ghost, 404)
    zone = demo("POST", "/volumes", {"volume": {"size": 1, "availability_zone": "mars"}})
    assert "Availability zone 'mars' is invalid" in error(zone, 400)
    assert error(demo("POST", "/volumes/x/action", {"os-extend": {"new_size": 2}}), 404)


def test_quotas_limits_and_types(demo: Cinder) -> None:
    huge = demo("POST", "/volumes", {"volume": {"size": 1001}})
    assert "VolumeSizeExceedsAvailableQuota" in error(huge, 413)
    for _ in range(10):
        demo.volume()
    assert "VolumeLimitExceeded" in error(demo("POST", "/volumes", {"volume": {"size": 1}}), 413)
    absolute = demo("GET", "/limits").json()["limits"]["absolute"]
    assert (absolute["totalVolumesUsed"], absolute["maxTotalVolumes"]) == (10, 10)
    usage = demo("GET", "/os-quota-sets/demo?usage=True").json()["quota_set"]
    assert usage["gigabytes"] == {"limit": 1000, "in_use": 10, "reserved": 0}
    assert error(demo("GET", "/os-quota-sets/other"), 403)
    [vtype] = demo("GET", "/types").json()["volume_types"]
    assert vtype["name"] == "__DEFAULT__"
    assert demo("GET", "/types/default").json()["volume_type"]["id"] == vtype["id"]
    zones = demo("GET", "/os-availability-zone").json()["availabilityZoneInfo"]
    assert zones == [{"zoneName": "nova", "zoneState": {"available": True}}]


def test_microversioned_fields(demo: Cinder) -> None:
    made = demo.volume()
    old = demo("GET", f"/volumes/{made['id']}", version="3.0").json()["volume"]
    assert "volume_type_id" not in old and "group_id" not in old
    new = demo("GET", f"/volumes/{made['id']}", version="3.70").json()["volume"]
    assert new["volume_type_id"] and new["shared_targets"] is None
    assert new["consumes_quota"] is True


def test_volume_from_image_is_bootable(client: ApiClient, demo: Cinder, tmp_path: Path) -> None:
    image = client.request("POST", "/image/v2/images", token="demo:demo", json={
        "name": "tiny", "disk_format": "raw", "container_format": "bare"}).json()  # fmt: skip
    put = client.request("PUT", f"/image/v2/images/{image['id']}/file", token="demo:demo",
                         content=b"boot" * 256,
                         headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    assert put.status_code == 204, put.text
    made = demo.volume(imageRef=image["id"])
    assert made["bootable"] == "true" and made["status"] == "available"
    assert made["volume_image_metadata"]["image_id"] == image["id"]
    data = (tmp_path / "volumes" / made["id"]).read_bytes()[:1024]
    assert data == b"boot" * 256


def test_create_and_update_answer_without_the_extensions_attributes(admin: Cinder) -> None:
    """Cinder's API extensions (tenant, host, migration attributes, image metadata) extend show
    and list only: tempest's create/update schemas refuse them."""
    made = admin("POST", "/volumes", {"volume": {"size": 1}})
    assert made.status_code == 202, made.text
    vid = made.json()["volume"]["id"]
    updated = admin("PUT", f"/volumes/{vid}", {"volume": {"name": "n"}})
    for body in (made.json()["volume"], updated.json()["volume"]):
        assert not [key for key in body if key.startswith("os-vol-")], body
    shown = admin("GET", f"/volumes/{vid}").json()["volume"]
    assert shown["os-vol-tenant-attr:tenant_id"] == "admin"
    assert "os-vol-host-attr:host" in shown
