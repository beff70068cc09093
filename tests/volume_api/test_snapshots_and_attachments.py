"""Snapshots and attachments through the embedded volume API: the attach steps (3.44+ and
the older actions), the statuses they leave, and what they refuse."""

from __future__ import annotations

from pathlib import Path

from tests.volume_api.conftest import Cinder, error

SERVER = "9d6f6b39-7c2b-4f1a-8f5e-0c6f1d2a3b4c"
CONNECTOR = {"host": "compute1", "initiator": "iqn.test"}


def test_snapshot_lifecycle_and_volume_from_it(demo: Cinder, tmp_path: Path) -> None:
    volume = demo.volume(size=1)
    (tmp_path / "volumes" / volume["id"]).write_bytes(b"payload")
    resp = demo("POST", "/snapshots", {"snapshot": {"volume_id": volume["id"], "name": "s1"}})
    assert resp.status_code == 202
    snap = resp.json()["snapshot"]
    shown = demo("GET", f"/snapshots/{snap['id']}").json()["snapshot"]
    assert shown["status"] == "available" and shown["size"] == 1
    assert shown["os-extended-snapshot-attributes:progress"] == "100%"
    listed = demo("GET", "/snapshots").json()["snapshots"]
    assert [s["id"] for s in listed] == [snap["id"]]
    assert "os-extended-snapshot-attributes:progress" not in listed[0]
    assert demo("PUT", f"/snapshots/{snap['id']}", {"snapshot": {"name": "s2"}}).json()[
        "snapshot"]["name"] == "s2"  # fmt: skip
    # A volume with a snapshot is not deleted; one made from it holds its data.
    assert "have snapshots" in error(demo("DELETE", f"/volumes/{volume['id']}"), 400)
    clone = demo.volume(snapshot_id=snap["id"], size=None)
    assert clone["size"] == 1 and clone["snapshot_id"] == snap["id"]
    assert (tmp_path / "volumes" / clone["id"]).read_bytes()[:7] == b"payload"
    small = demo("POST", "/volumes", {"volume": {"snapshot_id": snap["id"], "size": 0}})
    assert error(small, 400)
    assert demo("DELETE", f"/snapshots/{snap['id']}").status_code == 202
    assert error(demo("GET", f"/snapshots/{snap['id']}"), 404)
    assert demo("DELETE", f"/volumes/{volume['id']}").status_code == 202


def test_attachment_flow(demo: Cinder, other: Cinder) -> None:
    volume = demo.volume()
    below = demo("POST", "/attachments", {"attachment": {"volume_uuid": volume["id"]}},
                 version="3.26")  # fmt: skip
    assert error(below, 404)
    made = demo("POST", "/attachments", {"attachment": {
        "volume_uuid": volume["id"], "instance_uuid": SERVER}})  # fmt: skip
    assert made.status_code == 200, made.text
    attachment = made.json()["attachment"]
    assert attachment["status"] == "reserved" and attachment["connection_info"] == {}
    assert demo("GET", f"/volumes/{volume['id']}").json()["volume"]["status"] == "reserved"
    # Not multiattach: a second attachment is refused.
    second = demo("POST", "/attachments", {"attachment": {"volume_uuid": volume["id"]}})
    assert "must be available or downloading to reserve" in error(second, 400)
    updated = demo("PUT", f"/attachments/{attachment['id']}",
                   {"attachment": {"connector": CONNECTOR}}).json()["attachment"]  # fmt: skip
    assert updated["status"] == "attaching"
    assert updated["connection_info"]["driver_volume_type"] == "local"
    complete = demo("POST", f"/attachments/{attachment['id']}/action", {"os-complete": None})
    assert complete.status_code == 204
    shown = demo("GET", f"/volumes/{volume['id']}").json()["volume"]
    assert shown["status"] == "in-use"
    [held] = shown["attachments"]
    assert (held["server_id"], held["attachment_id"]) == (SERVER, attachment["id"])
    assert "attached" in error(demo("DELETE", f"/volumes/{volume['id']}"), 400)
    assert error(other("GET", f"/attachments/{attachment['id']}"), 404)
    listed = demo("GET", f"/attachments?volume_id={volume['id']}").json()["attachments"]
    assert [a["id"] for a in listed] == [attachment["id"]]
    gone = demo("DELETE", f"/attachments/{attachment['id']}")
    assert gone.status_code == 200 and gone.json() == {"attachments": []}
    assert demo("GET", f"/volumes/{volume['id']}").json()["volume"]["status"] == "available"


def test_legacy_attach_actions(demo: Cinder) -> None:
    volume = demo.volume()
    act = f"/volumes/{volume['id']}/action"
    assert demo("POST", act, {"os-reserve": None}).status_code == 202
    assert error(demo("POST", act, {"os-reserve": None}), 400)
    assert demo("POST", act, {"os-unreserve": None}).status_code == 202
    assert demo("POST", act, {"os-reserve": None}).status_code == 202
    info = demo("POST", act, {"os-initialize_connection": {"connector": CONNECTOR}})
    assert info.json()["connection_info"]["data"]["volume_id"] == volume["id"]
    attach = {"os-attach": {"instance_uuid": SERVER, "mountpoint": "/dev/vdb"}}
    assert demo("POST", act, attach).status_code == 202
    shown = demo("GET", f"/volumes/{volume['id']}").json()["volume"]
    assert shown["status"] == "in-use" and shown["attachments"][0]["device"] == "/dev/vdb"
    assert demo("POST", act, {"os-begin_detaching": None}).status_code == 202
    assert demo("POST", act, {"os-roll_detaching": None}).status_code == 202
    assert demo("POST", act, {"os-begin_detaching": None}).status_code == 202
    assert demo("POST", act, {"os-detach": {}}).status_code == 202
    shown = demo("GET", f"/volumes/{volume['id']}").json()["volume"]
    assert (shown["status"], shown["attachments"]) == ("available", [])
    assert "no such action" in error(demo("POST", act, {"os-fly": None}), 400)


def test_multiattach_volume_takes_two_attachments(demo: Cinder) -> None:
    volume = demo.volume(volume_type=demo.multiattach_type())
    for _ in range(2):
        made = demo("POST", "/attachments", {"attachment": {
            "volume_uuid": volume["id"], "connector": CONNECTOR}})  # fmt: skip
        assert made.status_code == 200
        demo("POST", f"/attachments/{made.json()['attachment']['id']}/action",
             {"os-complete": None})  # fmt: skip
    shown = demo("GET", f"/volumes/{volume['id']}").json()["volume"]
    assert shown["status"] == "in-use" and len(shown["attachments"]) == 2
