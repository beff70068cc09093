"""Cinder's ``os-reimage`` volume action (3.68) on the embedded volume API: the data and the
image metadata rewritten, Cinder's 4xx, and the ``volume-reimaged`` event it sends to the
compute API only for a reserved volume (a volume-backed rebuild's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openkeel.volume.embedded.faults import BadRequest
from openkeel.volume.embedded.service import GIB, ImageCopy, _check_image
from tests.client import ApiClient
from tests.volume_api.conftest import Cinder, error


def _image(client: ApiClient, data: bytes, **attrs: Any) -> str:
    image = client.request("POST", "/image/v2/images", token="demo:demo", json={
        "name": "img", "disk_format": "raw", "container_format": "bare", **attrs}).json()  # fmt: skip
    put = client.request("PUT", f"/image/v2/images/{image['id']}/file", token="demo:demo",
                         content=data, headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    assert put.status_code == 204, put.text
    return str(image["id"])


def _reimage(cinder: Cinder, vid: str, body: Any, version: str = "3.68") -> Any:
    return cinder("POST", f"/volumes/{vid}/action", {"os-reimage": body}, version=version)


def test_reimage_rewrites_data_and_image_metadata(
    client: ApiClient, demo: Cinder, tmp_path: Path
) -> None:
    first, second = _image(client, b"one" * 100), _image(client, b"two" * 10, min_disk=1)
    made = demo.volume(imageRef=first)
    vid = made["id"]
    assert _reimage(demo, vid, {"image_id": second}).status_code == 202
    shown = demo("GET", f"/volumes/{vid}").json()["volume"]
    assert shown["status"] == "available"
    assert shown["volume_image_metadata"]["image_id"] == second
    assert shown["volume_image_metadata"]["min_disk"] == "1"
    data = (tmp_path / "volumes" / vid).read_bytes()
    assert data[:30] == b"two" * 10 and data[30:300] == bytes(270)  # the old bytes are gone
    assert len(data) == 1024**3  # the volume keeps its size


def test_reimage_refusals(client: ApiClient, demo: Cinder, admin: Cinder) -> None:
    image = _image(client, b"x")
    vid = demo.volume()["id"]
    below = _reimage(demo, vid, {"image_id": image}, version="3.67")
    assert error(below, 404) == "The resource could not be found."  # Cinder 29's answer
    assert "'image_id' is a required property" in error(_reimage(demo, vid, {}), 400)
    assert "unexpected" in error(_reimage(demo, vid, {"image_id": image, "x": 1}), 400)
    assert error(_reimage(demo, vid, {"image_id": "nope"}), 400) == (
        "Invalid input for field/attribute image_id. Value: nope. 'nope' is not a 'uuid'"
    )
    unknown = "0" * 8 + "-0000-0000-0000-" + "0" * 12
    assert error(_reimage(demo, vid, {"image_id": unknown}), 404) == (
        f"Image {unknown} could not be found."
    )
    assert error(_reimage(demo, "nope", {"image_id": image}), 404)
    # reserved: only with reimage_reserved (Nova's rebuild); in-use never
    attachment = demo("POST", "/attachments", {"attachment": {"volume_uuid": vid}},
                      version="3.44").json()["attachment"]  # fmt: skip
    refused = _reimage(demo, vid, {"image_id": image})
    assert error(refused, 400) == (
        f"Invalid volume: Volume {vid} status must be available or error, but current status "
        "is reserved."
    )
    assert _reimage(demo, vid, {"image_id": image, "reimage_reserved": True}).status_code == 202
    assert demo("GET", f"/volumes/{vid}").json()["volume"]["status"] == "reserved"
    demo("DELETE", f"/attachments/{attachment['id']}", version="3.44")
    # bigger than the volume; smaller than the image's min_disk
    big = _image(client, b"y", min_disk=2)
    assert error(_reimage(demo, vid, {"image_id": big}), 400) == (
        "Invalid input received: Volume size 1GB cannot be smaller than the image minDisk size 2GB."
    )
    assert demo("GET", f"/volumes/{vid}").json()["volume"]["status"] == "available"
    # more than one attachment (a multiattach volume): 409
    multi = admin.volume(volume_type=admin.multiattach_type())["id"]
    for server in ("a", "b"):
        made = admin("POST", "/attachments", {"attachment": {"volume_uuid": multi,
                                                             "instance_uuid": server}},
                     version="3.44").json()["attachment"]  # fmt: skip
        complete = {"os-complete": None}
        admin("POST", f"/attachments/{made['id']}/action", complete, version="3.44")
    conflict = _reimage(admin, multi, {"image_id": image, "reimage_reserved": True})
    assert error(conflict, 409) == (
        "Cannot re-image a volume which is attached to more than one server."
    )


def test_an_image_larger_than_the_volume_is_refused() -> None:
    """Cinder's check_image_metadata (checked directly: a 2 GB image is not uploaded)."""
    with pytest.raises(BadRequest) as refused:
        _check_image(ImageCopy(iter(()), GIB + 1), 1)
    assert refused.value.message == (
        "Invalid input received: Size of specified image 2GB is larger than volume size 1GB."
    )
