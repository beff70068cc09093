"""The metadata service over a running cloud: who may ask (the proxy's signed headers, the
fixed IP), what it answers (OpenStack and EC2 documents of every version), the password a
guest posts and os-server-password serves, vendor data (a static file, dynamic targets on a
local HTTP server), and caching per ``[api] metadata_cache_expiration``."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from openkeel.domain.guest_metadata.versions import EC2_VERSIONS, OPENSTACK_VERSIONS
from tests.metadata.conftest import (
    FIXED_IP,
    PUBLIC_KEY,
    SECRET,
    USER_DATA,
    MetadataCloud,
)

PROXY = {"neutron.service_metadata_proxy": True, "neutron.metadata_proxy_shared_secret": SECRET}


# --- who is asking ------------------------------------------------------------------------


def test_signed_proxy_request_is_answered(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    resp = service.get("/openstack/latest/meta_data.json", headers=md.proxy_headers(sid))
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    doc = resp.json()
    assert doc["uuid"] == sid and doc["name"] == "guest-1"
    assert doc["hostname"] == "guest-1.novalocal"
    assert doc["meta"] == {"role": "web"} and doc["project_id"] == md.project(sid)
    assert doc["public_keys"] == {doc["keys"][0]["name"]: PUBLIC_KEY}
    assert doc["keys"][0]["type"] == "ssh"
    assert (doc["launch_index"], doc["availability_zone"]) == (0, "nova")
    assert (doc["devices"], doc["dedicated_cpus"]) == ([], [])
    assert len(base64.b64decode(doc["random_seed"])) == 512


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"X-Instance-ID-Signature": "0" * 64}, 403, "Invalid proxy request signature."),
        ({"X-Instance-ID-Signature": ""}, 403, "Invalid proxy request signature."),
        ({"X-Instance-ID-Signature": None}, 400, "X-Instance-ID-Signature header is missing"),
        ({"X-Instance-ID": None}, 400, "X-Instance-ID header is missing"),
        ({"X-Tenant-ID": None}, 400, "X-Tenant-ID header is missing"),
    ],
)
def test_bad_proxy_headers_are_refused(
    md: MetadataCloud, change: dict[str, Any], status: int, message: str
) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = {**md.proxy_headers(sid), **change}
    headers = {k: v for k, v in headers.items() if v is not None}
    resp = service.get("/openstack/latest/meta_data.json", headers=headers)
    assert resp.status_code == status, resp.text
    assert message in resp.text


def test_signature_with_another_secret_is_refused(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    resp = service.get("/openstack/latest", headers=md.proxy_headers(sid, "not-the-secret"))
    assert (resp.status_code, "Invalid proxy request signature." in resp.text) == (403, True)


def test_other_tenant_or_unknown_instance_is_not_found(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = {**md.proxy_headers(sid), "X-Tenant-ID": "someone-else"}
    assert service.get("/openstack/latest", headers=headers).status_code == 404
    ghost = "00000000-0000-4000-8000-000000000000"
    assert (
        service.get("/openstack/latest", headers=md.proxy_headers_for(ghost, "p")).status_code
        == 404
    )


def test_fixed_ip_of_the_requester_finds_its_server(md: MetadataCloud) -> None:
    sid = md.boot()
    md.attach_network(sid)
    resp = md.metadata(client=(FIXED_IP, 51000)).get("/openstack/latest/meta_data.json")
    assert (resp.status_code, resp.json()["uuid"]) == (200, sid)
    stranger = md.metadata(client=("10.0.0.77", 51000))
    assert stranger.get("/openstack/latest/meta_data.json").status_code == 404


def test_forwarded_for_names_the_requester_behind_a_proxy(md: MetadataCloud) -> None:
    sid = md.boot()
    md.attach_network(sid)
    headers = {"X-Forwarded-For": f"{FIXED_IP}, 192.0.2.1"}
    plain = md.metadata(client=("192.0.2.1", 80))
    # Not trusted unless configured: the proxy's own address is looked up.
    assert plain.get("/latest/meta-data/instance-id", headers=headers).status_code == 404
    behind = md.metadata(client=("192.0.2.1", 80), **{"oslo_middleware.enable_proxy_headers_parsing": True})  # fmt: skip
    resp = behind.get("/latest/meta-data/local-ipv4", headers=headers)
    assert (resp.status_code, resp.text) == (200, FIXED_IP)


def test_instance_id_headers_ignored_without_the_proxy_option(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(client=("10.9.9.9", 1))
    assert service.get("/openstack/latest", headers=md.proxy_headers(sid)).status_code == 404


# --- what it answers ----------------------------------------------------------------------


def test_listings_of_versions_and_documents(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = md.proxy_headers(sid)
    root = service.get("/")
    assert root.text.split("\n") == [*EC2_VERSIONS, "latest"]
    assert service.get("/openstack", headers=headers).text.split("\n") == [*OPENSTACK_VERSIONS, "latest"]  # fmt: skip
    assert service.get("/openstack/2012-08-10", headers=headers).text.split("\n") == ["meta_data.json", "user_data"]  # fmt: skip
    assert service.get("/openstack/latest/", headers=headers).text.split("\n") == [
        "meta_data.json", "user_data", "password", "vendor_data.json", "network_data.json",
        "vendor_data2.json"]  # fmt: skip
    old = service.get("/openstack/2012-08-10/meta_data.json", headers=headers).json()
    assert "random_seed" not in old and "project_id" not in old and "devices" not in old
    assert service.get("/openstack/latest/user_data", headers=headers).content == USER_DATA
    assert service.get("/openstack/2011-01-01/meta_data.json", headers=headers).status_code == 404
    assert service.get("/openstack/latest/nothing", headers=headers).status_code == 404
    assert service.get("/openstack/latest/vendor_data.json", headers=headers).json() == {}
    assert service.get("/openstack/latest/vendor_data2.json", headers=headers).json() == {"static": {}}  # fmt: skip
    assert service.get("/openstack/latest/network_data.json", headers=headers).json() == {}


def test_network_data_from_the_network_info(md: MetadataCloud) -> None:
    sid = md.boot()
    md.attach_network(sid)
    service = md.metadata(**PROXY)
    doc = service.get("/openstack/latest/network_data.json", headers=md.proxy_headers(sid)).json()
    (link,) = doc["links"]
    assert link == {"id": "tapb3a1c6d0-5f", "vif_id": "b3a1c6d0-5f1e-4a8e-9d2c-1e5f0a9b8c7d",
                    "type": "ovs", "mtu": 1450, "ethernet_mac_address": "fa:16:3e:12:34:56"}  # fmt: skip
    (network,) = doc["networks"]
    assert network["type"] == "ipv4" and network["ip_address"] == FIXED_IP
    assert network["netmask"] == "255.255.255.0" and network["link"] == link["id"]
    assert network["routes"] == [
        {"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.0.0.1"},
        {"network": "192.168.7.0", "netmask": "255.255.255.0", "gateway": "10.0.0.254"},
    ]
    assert doc["services"] == [{"type": "dns", "address": "10.0.0.2"}]


def test_ec2_metadata(md: MetadataCloud) -> None:
    sid = md.boot()
    md.attach_network(sid)
    service = md.metadata(client=(FIXED_IP, 1))
    listing = service.get("/2009-04-04/meta-data/").text.split("\n")
    assert "public-keys/" in listing and "placement/" in listing and "instance-id" in listing
    assert service.get("/latest/meta-data/placement/availability-zone").text == "nova"
    assert service.get("/latest/meta-data/public-ipv4").text == "172.24.4.9"
    assert service.get("/latest/meta-data/hostname").text == "guest-1.novalocal"
    assert service.get("/latest/meta-data/public-keys/").text.startswith("0=key-")
    assert service.get("/latest/meta-data/public-keys/0/openssh-key").text == PUBLIC_KEY
    assert service.get("/2009-04-04/user-data").content == USER_DATA
    assert service.get("/ec2/latest/meta-data/instance-type").text == "m1.tiny"
    assert service.get("/1.0/meta-data/").text.count("public-hostname") == 0
    assert service.get("/2009-04-05/meta-data/").status_code == 404


# --- the password -------------------------------------------------------------------------


def test_password_posted_by_the_guest_is_served_by_os_server_password(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = md.proxy_headers(sid)
    assert service.get("/openstack/latest/password", headers=headers).text == ""
    encrypted = base64.b64encode(b"x" * 600).decode()  # longer than one 255-character chunk
    assert service.post("/openstack/latest/password", content=encrypted, headers=headers).status_code == 200  # fmt: skip
    api = md.cloud.api.get(f"/v2.1/servers/{sid}/os-server-password")
    assert (api.status_code, api.json()) == (200, {"password": encrypted})
    assert service.get("/openstack/latest/password", headers=headers).text == encrypted
    again = service.post("/openstack/latest/password", content="other", headers=headers)
    assert again.status_code == 409
    assert md.cloud.api.delete(f"/v2.1/servers/{sid}/os-server-password").status_code == 204
    assert md.cloud.api.get(f"/v2.1/servers/{sid}/os-server-password").json() == {"password": ""}


def test_password_too_large_or_wrong_method(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = md.proxy_headers(sid)
    big = service.post("/openstack/latest/password", content="y" * 1021, headers=headers)
    assert (big.status_code, "Request is too large." in big.text) == (400, True)
    put = service.put("/openstack/latest/password", content="z", headers=headers)
    assert (put.status_code, "GET and POST only are supported." in put.text) == (400, True)
    assert service.get("/openstack/2012-08-10/password", headers=headers).status_code == 404


# --- caching ------------------------------------------------------------------------------


def _set_meta(md: MetadataCloud, sid: str, value: str) -> None:
    resp = md.cloud.api.put(f"/v2.1/servers/{sid}/metadata", {"metadata": {"role": value}})
    assert resp.status_code == 200, resp.text


def test_metadata_is_cached_for_the_expiration(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY)
    headers = md.proxy_headers(sid)

    def role() -> str:
        doc = service.get("/openstack/latest/meta_data.json", headers=headers).json()
        return str(doc["meta"]["role"])

    assert role() == "web"
    _set_meta(md, sid, "db")
    assert role() == "web"  # cached
    md.clock.advance(14)
    assert role() == "web"
    md.clock.advance(2)  # past [api] metadata_cache_expiration = 15
    assert role() == "db"


def test_no_caching_with_zero_expiration(md: MetadataCloud) -> None:
    sid = md.boot()
    service = md.metadata(**PROXY, **{"api.metadata_cache_expiration": 0})
    headers = md.proxy_headers(sid)
    assert service.get("/openstack/latest/meta_data.json", headers=headers).json()["meta"]["role"] == "web"  # fmt: skip
    _set_meta(md, sid, "cache")
    assert service.get("/openstack/latest/meta_data.json", headers=headers).json()["meta"]["role"] == "cache"  # fmt: skip


# --- vendor data --------------------------------------------------------------------------


class _Target(http.server.BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, tuple[int, bytes]]] = {}
    received: ClassVar[list[tuple[str, dict[str, str], Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.received.append((self.path, dict(self.headers), json.loads(self.rfile.read(length))))
        status, body = self.answers.get(self.path, (404, b""))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def vendor_target() -> Iterator[tuple[str, type[_Target]]]:
    """A dynamic vendordata target on 127.0.0.1 (``/good`` answers JSON, ``/bad`` a 500,
    ``/text`` something that is not JSON)."""
    _Target.answers = {"/good": (200, b'{"ip": "10.0.0.5", "token": "t-1"}'),
                       "/bad": (500, b"boom"), "/text": (200, b"not json")}  # fmt: skip
    _Target.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Target)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Target
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_dynamic_vendordata_targets(md: MetadataCloud, vendor_target: tuple[str, type[_Target]], tmp_path: Any) -> None:  # fmt: skip
    base, target = vendor_target
    static = tmp_path / "vendor.json"
    static.write_text('{"motd": "welcome"}')
    sid = md.boot()
    service = md.metadata(**PROXY, **{
        "api.vendordata_providers": ["StaticJSON", "DynamicJSON"],
        "api.vendordata_jsonfile_path": str(static),
        "api.vendordata_dynamic_targets": [f"good@{base}/good", f"bad@{base}/bad",
                                           f"text@{base}/text", "nameless", f"good@{base}/bad"],
    })  # fmt: skip
    headers = md.proxy_headers(sid)
    doc = service.get("/openstack/latest/vendor_data2.json", headers=headers).json()
    assert doc == {"static": {"motd": "welcome"}, "good": {"ip": "10.0.0.5", "token": "t-1"},
                   "bad": {}, "text": {}}  # fmt: skip
    assert service.get("/openstack/latest/vendor_data.json", headers=headers).json() == {"motd": "welcome"}  # fmt: skip
    path, sent_headers, body = target.received[0]
    assert path == "/good" and sent_headers["User-Agent"] == "openstack-nova-vendordata"
    assert body["instance-id"] == sid and body["project-id"] == md.project(sid)
    assert body["hostname"] == "guest-1.novalocal" and body["metadata"] == {"role": "web"}
    assert base64.b64decode(body["user-data"]) == USER_DATA
    # The dynamic document is older than Newton's second version.
    assert (
        service.get("/openstack/2016-06-30/vendor_data2.json", headers=headers).status_code == 404
    )


def test_failing_vendordata_target_is_fatal_when_configured(md: MetadataCloud, vendor_target: tuple[str, type[_Target]]) -> None:  # fmt: skip
    base, _target = vendor_target
    sid = md.boot()
    service = md.metadata(**PROXY, **{
        "api.vendordata_providers": ["DynamicJSON"],
        "api.vendordata_dynamic_targets": [f"bad@{base}/bad"],
        "api.vendordata_dynamic_failure_fatal": True,
    })  # fmt: skip
    headers = md.proxy_headers(sid)
    resp = service.get("/openstack/latest/vendor_data2.json", headers=headers)
    assert resp.status_code == 500 and "unknown error" in resp.text
    # Without StaticJSON there is no vendor_data.json.
    assert service.get("/openstack/latest/vendor_data.json", headers=headers).status_code == 404
