"""The embedded image catalog (persistence, seeding) and the Glance v2 client (fake transport)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openkeel.clients.image import (
    Caller,
    GlanceClient,
    Image,
    ImageBadRequest,
    ImageData,
    ImageNotAuthorized,
    ImageNotFound,
    ImageServiceUnavailable,
)
from openkeel.db.engine import make_engine
from openkeel.db.image_catalog import DEFAULT_IMAGE, EmbeddedImageCatalog
from openkeel.db.image_files import ImageFiles

ADMIN = Caller("p", is_admin=True)


def test_catalog_persists_and_seeds_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'api.sqlite'}"
    first = EmbeddedImageCatalog(make_engine(url))
    first.install()
    first.update_properties(ADMIN, DEFAULT_IMAGE.id, {"a": "1"}, purge=True)
    second = EmbeddedImageCatalog(make_engine(url))
    second.install()
    assert [i.id for i in second.list(ADMIN, {})] == [DEFAULT_IMAGE.id]
    assert second.get(ADMIN, DEFAULT_IMAGE.id).properties == {"a": "1"}
    second.delete(ADMIN, DEFAULT_IMAGE.id)
    EmbeddedImageCatalog(make_engine(url)).install()
    assert second.list(ADMIN, {}) == []


class FakeGlance:
    """A transport answering from a script of (status, body) replies."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, str, dict[str, str], Any]] = []

    def __call__(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, bytes]:
        self.calls.append((method, url, headers, json.loads(body) if body else None))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        status, payload = reply
        return status, json.dumps(payload).encode() if payload is not None else b""


GLANCE_IMAGE = {
    "id": "i1",
    "name": "n",
    "status": "active",
    "min_ram": 0,
    "min_disk": 1,
    "size": 5,
    "visibility": "public",
    "created_at": "2011-01-01T01:02:03Z",
    "updated_at": "2011-01-01T01:02:03Z",
    "tags": [],
    "kernel_id": "k",
}


def test_glance_get_converts_and_sends_token() -> None:
    fake = FakeGlance((200, GLANCE_IMAGE))
    image = GlanceClient(["http://g:9292/"], transport=fake).get(Caller("p", False, "tok"), "i1")
    assert (image.id, image.min_disk, image.properties) == ("i1", 1, {"kernel_id": "k"})
    assert fake.calls[0][:2] == ("GET", "http://g:9292/v2/images/i1")
    assert fake.calls[0][2]["X-Auth-Token"] == "tok"


def test_glance_list_maps_filters() -> None:
    fake = FakeGlance((200, {"images": [GLANCE_IMAGE]}))
    client = GlanceClient(["http://g"], transport=fake)
    images = client.list(ADMIN, {"property-a": "b", "changes-since": "X"}, limit=1)
    assert [i.id for i in images] == ["i1"]
    assert fake.calls[0][1] == (
        "http://g/v2/images?a=b&updated_at=gte%3AX&sort=created_at%3Adesc%2Cid%3Adesc&limit=1"
    )


def test_glance_errors_and_retries() -> None:
    client = GlanceClient(["http://g"], num_retries=1, transport=FakeGlance((404, None)))
    with pytest.raises(ImageNotFound):
        client.get(ADMIN, "x")
    client = GlanceClient(["http://g"], transport=FakeGlance((403, None)))
    with pytest.raises(ImageNotAuthorized):
        client.delete(ADMIN, "x")
    fake = FakeGlance(OSError("down"), (503, None))
    with pytest.raises(ImageServiceUnavailable):
        GlanceClient(["http://a", "http://b"], num_retries=1, transport=fake).get(ADMIN, "x")
    assert [c[1] for c in fake.calls] == ["http://a/v2/images/x", "http://b/v2/images/x"]


def test_glance_update_patches_properties() -> None:
    fake = FakeGlance((200, GLANCE_IMAGE), (200, {**GLANCE_IMAGE, "x": "1"}))
    client = GlanceClient(["http://g"], transport=fake)
    image = client.update_properties(ADMIN, "i1", {"x": "1"}, purge=True)
    assert image.properties == {"kernel_id": "k", "x": "1"}
    assert fake.calls[1][3] == [
        {"op": "add", "path": "/x", "value": "1"},
        {"op": "remove", "path": "/kernel_id"},
    ]


def test_catalog_sorts_by_name_with_unset_and_empty_names(tmp_path: Path) -> None:
    catalog = EmbeddedImageCatalog(make_engine(f"sqlite:///{tmp_path / 'api.sqlite'}"))
    catalog.install()
    for image_id, name in (("a", ""), ("b", None)):
        catalog.add(Image(id=image_id, name=name, status="active"))
    ordered = catalog.list(ADMIN, {}, sort=(("name", "asc"),))
    assert [i.name for i in ordered] == [None, "", DEFAULT_IMAGE.name]


class RawFakeGlance(FakeGlance):
    """FakeGlance that keeps a non-JSON body (image data) as bytes."""

    def __call__(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, bytes]:
        if headers.get("Content-Type") == "application/octet-stream":
            self.calls.append((method, url, headers, body))
            status, _ = self.replies.pop(0)
            return status, b""
        return super().__call__(method, url, headers, body)


def test_glance_create_registers_and_shares_with_the_instance_owner() -> None:
    fake = FakeGlance(
        (201, {**GLANCE_IMAGE, "status": "queued", "visibility": "shared"}), (200, {})
    )
    image = Image(id="", name="snap", status="queued", visibility="shared", min_disk=1,
                  properties={"instance_owner": "other", "image_type": "snapshot"})  # fmt: skip
    created = GlanceClient(["http://g"], transport=fake).create(Caller("p", False, "tok"), image)
    assert created.status == "queued"
    assert fake.calls[0][:2] == ("POST", "http://g/v2/images")
    assert fake.calls[0][3] == {"name": "snap", "visibility": "shared", "min_ram": 0, "min_disk": 1,
                                "instance_owner": "other", "image_type": "snapshot"}  # fmt: skip
    assert fake.calls[1][1:4:2] == ("http://g/v2/images/i1/members", {"member": "other"})


def test_glance_upload_sets_formats_then_puts_the_data() -> None:
    fake = RawFakeGlance((200, GLANCE_IMAGE), (200, GLANCE_IMAGE), (204, None), (200, GLANCE_IMAGE))
    client = GlanceClient(["http://g"], transport=fake)
    client.upload(ADMIN, "i1", ImageData("raw", "bare", (b"ab", b"cd"), 4, {"where": "x"}))
    assert fake.calls[1][3] == [
        {"op": "replace", "path": "/disk_format", "value": "raw"},
        {"op": "replace", "path": "/container_format", "value": "bare"},
        {"op": "add", "path": "/where", "value": "x"},
    ]
    assert fake.calls[2][:2] == ("PUT", "http://g/v2/images/i1/file")
    assert fake.calls[2][3] == b"abcd"
    # data kept by the hypervisor cannot reach Glance
    with pytest.raises(ImageBadRequest):
        client.upload(ADMIN, "i1", ImageData("raw", "bare", None, 4))


class _PutServer(BaseHTTPRequestHandler):
    """Records each PUT: its Transfer-Encoding and the body it read."""

    seen: ClassVar[list[tuple[str | None, bytes]]] = []

    def do_PUT(self) -> None:
        body = b""
        if self.headers.get("Transfer-Encoding") == "chunked":
            while size := int(self.rfile.readline().strip(), 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _PutServer.seen.append((self.headers.get("Transfer-Encoding"), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_glance_upload_streams_an_iterator_and_never_resends_it() -> None:
    """A snapshot's exported bytes (an iterator, decision 0071) go out chunked through the
    keystoneauth session, read once; a connection lost after reading began is not retried
    (the bytes are gone), one refused before is."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PutServer)
    thread = threading.Thread(target=server.serve_forever, name="put-server")
    thread.start()
    try:
        client = GlanceClient([f"http://127.0.0.1:{server.server_address[1]}"])
        produced: list[bytes] = []

        def chunks() -> Iterator[bytes]:
            for part in (b"ab" * 1000, b"cd" * 1000):
                produced.append(part)
                yield part

        assert client._put_data(ADMIN, "/v2/images/i1/file", chunks()) == 204
        assert _PutServer.seen == [("chunked", b"ab" * 1000 + b"cd" * 1000)]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

    attempts: list[bytes] = []

    def cut(method: str, url: str, headers: dict[str, str], body: Any) -> tuple[int, bytes]:
        attempts.append(next(iter(body)))  # reads the first chunk, then the connection drops
        raise ConnectionResetError("reset")

    with pytest.raises(ImageServiceUnavailable, match="lost during the upload"):
        GlanceClient(["http://g"], transport=cut)._put_data(ADMIN, "/f", iter([b"x", b"y"]))
    assert attempts == [b"x"]
    refused = [ConnectionRefusedError("refused"), (204, None)]

    def flaky(method: str, url: str, headers: dict[str, str], body: Any) -> tuple[int, bytes]:
        reply = refused.pop(0)
        if isinstance(reply, Exception):
            raise reply  # before reading the body: retried with the same, unread stream
        assert b"".join(body) == b"xy"
        return 204, b""

    assert (
        GlanceClient(["http://g"], transport=flaky)._put_data(ADMIN, "/f", iter([b"x", b"y"]))
        == 204
    )


def test_catalog_snapshot_upload(tmp_path: Path) -> None:
    files = ImageFiles(tmp_path / "images")
    catalog = EmbeddedImageCatalog(make_engine(f"sqlite:///{tmp_path / 'api.sqlite'}"), files)
    catalog.install(seed_default=False)
    owner = Caller("p")
    queued = catalog.create(owner, Image(id="", name="s", status="active", visibility="private"))
    assert (queued.status, queued.owner) == ("queued", "p")
    active = catalog.upload(owner, queued.id, ImageData("raw", "bare", (b"disk",), 4))
    assert (active.status, active.size, active.disk_format, active.virtual_size) == ("active", 4, "raw", 4)  # fmt: skip
    assert b"".join(files.read(queued.id)) == b"disk"
    with pytest.raises(ImageNotFound):  # no longer queued
        catalog.upload(owner, queued.id, ImageData("raw", "bare", (b"x",), 1))
    kept = catalog.create(owner, Image(id="", name="k", status="queued", visibility="private"))
    located = ImageData("raw", "bare", None, 2**30, {"openkeel_kubevirt_data_source": "ns/n"})
    active = catalog.upload(owner, kept.id, located)
    assert (active.status, active.size, active.checksum) == ("active", 2**30, None)
    assert active.properties == {"openkeel_kubevirt_data_source": "ns/n"}
    assert not files.has_data(kept.id)
