"""The os-volumes and os-snapshots proxies (2.1-2.35): the project's volumes and snapshots in
Nova's form, from the embedded volume service; Nova's 4xx; 404 after 2.35. (Responses are
checked against Nova's schemas by the conformance plugin.)"""

from __future__ import annotations

from tests.client import ApiClient

DEMO = "demo:demo"


def test_volume_proxy(api: ApiClient) -> None:
    body = {"volume": {"size": 1, "display_name": "v1", "display_description": "d",
                       "metadata": {"k": "v"}}}  # fmt: skip
    made = api.post("/v2.1/os-volumes", body, token=DEMO)
    assert made.status_code == 200, made.text
    volume = made.json()["volume"]
    assert made.headers["Location"].endswith(f"/os-volumes/{volume['id']}")
    assert (volume["displayName"], volume["size"], volume["attachments"]) == ("v1", 1, [{}])
    assert volume["volumeType"] == "__DEFAULT__" and volume["metadata"] == {"k": "v"}
    shown = api.get(f"/v2.1/os-volumes/{volume['id']}", token=DEMO).json()["volume"]
    assert shown["status"] == "available"
    listed = api.get("/v2.1/os-volumes/detail", token=DEMO).json()["volumes"]
    assert [v["id"] for v in listed] == [volume["id"]]
    assert api.get("/v2.1/os-volumes?limit=0", token=DEMO).json()["volumes"] == []
    assert api.get("/v2.1/os-volumes", token="other:other").json()["volumes"] == []
    hidden = api.get(f"/v2.1/os-volumes/{volume['id']}", token="other:other")
    assert hidden.status_code == 404 and "could not be found" in hidden.text
    bad = api.post("/v2.1/os-volumes", {"volume": {"size": 1, "availability_zone": "x"}},
                   token=DEMO)  # fmt: skip
    assert bad.status_code == 400
    ghost = api.post("/v2.1/os-volumes", {"volume": {"size": 1, "snapshot_id": "nope"}},
                     token=DEMO)  # fmt: skip
    assert ghost.status_code == 404
    assert api.get("/v2.1/os-volumes", version="2.36").status_code == 404
    assert api.delete(f"/v2.1/os-volumes/{volume['id']}", token=DEMO).status_code == 202
    assert api.get(f"/v2.1/os-volumes/{volume['id']}", token=DEMO).status_code == 404


def test_snapshot_proxy(api: ApiClient) -> None:
    volume = api.post("/v2.1/os-volumes", {"volume": {"size": 2}}, token=DEMO).json()["volume"]
    body = {"snapshot": {"volume_id": volume["id"], "display_name": "s1", "force": "false"}}
    made = api.post("/v2.1/os-snapshots", body, token=DEMO)
    assert made.status_code == 200, made.text
    snap = made.json()["snapshot"]
    assert (snap["volumeId"], snap["size"], snap["displayName"]) == (volume["id"], 2, "s1")
    assert [s["id"] for s in api.get("/v2.1/os-snapshots", token=DEMO).json()["snapshots"]] == [
        snap["id"]
    ]
    assert api.get(f"/v2.1/os-snapshots/{snap['id']}", token=DEMO).json()["snapshot"][
        "status"] == "available"  # fmt: skip
    clone = api.post("/v2.1/os-volumes", {"volume": {"size": 2, "snapshot_id": snap["id"]}},
                     token=DEMO)  # fmt: skip
    assert clone.json()["volume"]["snapshotId"] == snap["id"]
    # The volume with a snapshot cannot go (Cinder's 400).
    assert api.delete(f"/v2.1/os-volumes/{volume['id']}", token=DEMO).status_code == 400
    assert api.delete(f"/v2.1/os-snapshots/{snap['id']}", token=DEMO).status_code == 202
    missing = api.get(f"/v2.1/os-snapshots/{snap['id']}", token=DEMO)
    assert missing.status_code == 404 and "Snapshot" in missing.text
    assert api.get("/v2.1/os-snapshots", version="2.36").status_code == 404
