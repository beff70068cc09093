"""Remote consoles across the API and the compute role: the URL at each microversion, the
stored (hashed) token it carries, ``os-console-auth-tokens``, Nova's errors, and the tokens
going with the server."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import sqlalchemy as sa

from openkeel.db.repositories.console_auth_tokens import token_hash
from openkeel.db.schema import cell as cell_schema
from tests.conformance import response_check
from tests.functional.conftest import Cloud


def _conforms(resp: Any, kind: str = "nova") -> Any:
    """``resp`` as Nova 34's own response schemas (and tempest's) accept it."""
    report = response_check.inspect(resp)
    assert (report.kind, report.errors) == (kind, []), report
    return resp


def _create(cloud: Cloud, sid: str, protocol: str, kind: str, version: str = "2.6") -> Any:
    return cloud.api.post(
        f"/v2.1/servers/{sid}/remote-consoles",
        {"remote_console": {"protocol": protocol, "type": kind}},
        token="admin:admin",
        version=version,
    )


def _token(url: str) -> str:
    query = parse_qs(urlsplit(url).query)
    if "path" in query:
        query = parse_qs(urlsplit(query["path"][0]).query)
    return query["token"][0]


def _enable_serial(cloud: Cloud) -> None:
    cloud.services.conf.set_override("enabled", True, group="serial_console")


def test_vnc_and_serial_urls_and_their_tokens(cloud: Cloud) -> None:
    _enable_serial(cloud)
    sid = cloud.boot("console")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    vnc = _conforms(_create(cloud, sid, "vnc", "novnc"))
    assert vnc.status_code == 200, vnc.text
    body = vnc.json()["remote_console"]
    assert (body["protocol"], body["type"]) == ("vnc", "novnc")
    assert body["url"].startswith("http://127.0.0.1:6080/vnc_auto.html?path=%3Ftoken%3D")
    serial = _conforms(_create(cloud, sid, "serial", "serial", "2.99")).json()["remote_console"]
    assert serial["url"].startswith("ws://127.0.0.1:6083/?token=")
    token = _token(serial["url"])
    (cell,) = [e for u, e in cloud.services.cell_dbs.items() if not u.startswith("00000000")]
    table = cell_schema.console_auth_tokens
    with cell.connect() as conn:
        hashes = set(conn.execute(sa.select(table.c.token_hash)).scalars())
    assert token_hash(token) in hashes and token not in hashes
    shown = cloud.api.get(f"/v2.1/os-console-auth-tokens/{token}", token="admin:admin",
                          version="2.31")  # fmt: skip
    assert _conforms(shown).status_code == 200, shown.text
    _conforms(cloud.api.get(f"/v2.1/os-console-auth-tokens/{token}", token="admin:admin",
                            version="2.99"))  # fmt: skip
    console = shown.json()["console"]
    assert console["instance_uuid"] == sid and console["host"] == "127.0.0.1"
    assert console["port"] > 0 and console["internal_access_path"] is None
    old = cloud.api.get(f"/v2.1/os-console-auth-tokens/{token}", token="admin:admin",
                        version="2.30")  # fmt: skip
    assert old.status_code == 400
    assert cloud.api.get("/v2.1/os-console-auth-tokens/nope", token="admin:admin",
                         version="2.31").status_code == 404  # fmt: skip
    user = cloud.api.get(f"/v2.1/os-console-auth-tokens/{token}", token="bob:other",
                         version="2.31")  # fmt: skip
    assert user.status_code == 403
    assert cloud.api.delete(f"/v2.1/servers/{sid}", token="admin:admin").status_code == 204
    cloud.wait(sid, gone=True)
    with cell.connect() as conn:
        assert conn.execute(sa.select(table.c.id)).first() is None
    gone = cloud.api.get(f"/v2.1/os-console-auth-tokens/{token}", token="admin:admin",
                         version="2.31")  # fmt: skip
    assert gone.status_code == 404


def test_legacy_actions(cloud: Cloud) -> None:
    sid = cloud.boot("legacy")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    action = f"/v2.1/servers/{sid}/action"
    vnc = cloud.api.post(action, {"os-getVNCConsole": {"type": "novnc"}}, token="admin:admin")
    assert _conforms(vnc).status_code == 200, vnc.text
    assert vnc.json()["console"]["type"] == "novnc"
    serial = cloud.api.post(action, {"os-getSerialConsole": {"type": "serial"}},
                            token="admin:admin")  # fmt: skip
    assert _conforms(serial, "fault").status_code == 400
    assert serial.json()["badRequest"]["message"] == "Unavailable console type serial."
    spice = cloud.api.post(action, {"os-getSPICEConsole": {"type": "spice-html5"}},
                           token="admin:admin")  # fmt: skip
    assert spice.status_code == 400
    late = cloud.api.post(action, {"os-getVNCConsole": {"type": "novnc"}}, token="admin:admin",
                          version="2.6")  # fmt: skip
    assert late.status_code == 404  # no such action above 2.5
    other = cloud.api.post(action, {"os-getVNCConsole": {"type": "novnc"}}, token="bob:other")
    assert other.status_code == 404


def test_nova_errors(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("errors")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    wrong = _conforms(_create(cloud, sid, "vnc", "serial"), "fault")
    assert wrong.status_code == 400
    assert wrong.json()["badRequest"]["message"] == "Invalid console type serial"
    rdp = _create(cloud, sid, "rdp", "rdp-html5")
    assert rdp.json()["badRequest"]["message"] == "Unavailable console type rdp."
    assert _create(cloud, sid, "mks", "webmks").status_code == 400  # schema: 2.8+
    mks = _create(cloud, sid, "mks", "webmks", version="2.8")
    assert mks.json()["badRequest"]["message"] == "Unavailable console type webmks."
    assert _create(cloud, sid, "spice", "spice-direct", version="2.98").status_code == 400
    assert _create(cloud, sid, "vnc", "novnc", version="2.5").status_code == 404
    cloud.services.conf.set_override("enabled", True, group="mks")
    mks = _create(cloud, sid, "mks", "webmks", version="2.8")
    assert mks.status_code == 501, mks.text
    service.host.driver.unsupported = frozenset({"get_vnc_console"})
    assert _create(cloud, sid, "vnc", "novnc").status_code == 501
    assert _create(cloud, "0" * 32, "vnc", "novnc").status_code == 404
