"""The unchanged ``openstack`` CLI against the all-in-one's volume service: volumes (blank and
from an image), their snapshots and a volume from one, extend, delete; and volumes attached to
a server (``server add volume``, ``server volume list``, ``server remove volume``)."""

from __future__ import annotations

import time

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc

IMAGE = "cirros-0.6.3-x86_64-disk"


def _wait_status(cloud: RunningCloud, volume: str, status: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while (shown := osc(cloud, "volume", "show", volume))["status"] != status:
        assert time.monotonic() < deadline, f"{volume} never became {status}: {shown}"
        time.sleep(0.5)  # attach and detach are casts: polling their effect, bounded
    return dict(shown)


def test_volume_and_snapshot_commands(cloud: RunningCloud) -> None:
    made = osc(cloud, "volume", "create", "--size", "1", "e2e-vol")
    assert made["size"] == 1 and made["name"] == "e2e-vol"
    shown = _wait_status(cloud, "e2e-vol", "available")
    assert shown["bootable"] is False and shown["type"] == "__DEFAULT__", shown
    assert [v["Name"] for v in osc(cloud, "volume", "list")] == ["e2e-vol"]
    osc(cloud, "volume", "set", "--size", "2", "--property", "tier=gold", "e2e-vol",
        "--no-output")  # fmt: skip
    shown = osc(cloud, "volume", "show", "e2e-vol")
    assert shown["size"] == 2 and shown["properties"] == {"tier": "gold"}

    snap = osc(cloud, "volume", "snapshot", "create", "--volume", "e2e-vol", "e2e-snap")
    assert snap["volume_id"] == made["id"]
    assert osc(cloud, "volume", "snapshot", "show", "e2e-snap")["status"] == "available"
    assert [s["Name"] for s in osc(cloud, "volume", "snapshot", "list")] == ["e2e-snap"]
    clone = osc(cloud, "volume", "create", "--snapshot", "e2e-snap", "e2e-clone")
    assert clone["size"] == 2 and clone["snapshot_id"] == snap["id"]

    booted = osc(cloud, "volume", "create", "--image", IMAGE, "--size", "1", "e2e-boot")
    assert _wait_status(cloud, "e2e-boot", "available")["bootable"] is True

    osc(cloud, "volume", "snapshot", "delete", "e2e-snap", "--no-output")
    osc(cloud, "volume", "delete", "e2e-vol", "e2e-clone", booted["id"], "--no-output")
    assert osc(cloud, "volume", "list") == []


def test_server_volume_commands(cloud: RunningCloud) -> None:
    osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE, "--wait",
        "e2e-vol-server")  # fmt: skip
    kept = osc(cloud, "volume", "create", "--size", "1", "e2e-kept")
    gone = osc(cloud, "volume", "create", "--size", "1", "e2e-gone")
    _wait_status(cloud, "e2e-kept", "available")
    _wait_status(cloud, "e2e-gone", "available")
    osc(cloud, "server", "add", "volume", "e2e-vol-server", "e2e-kept", "--no-output")
    osc(cloud, "--os-compute-api-version", "2.79", "server", "add", "volume", "--tag", "logs",
        "--enable-delete-on-termination", "e2e-vol-server", "e2e-gone", "--no-output")  # fmt: skip
    _wait_status(cloud, "e2e-kept", "in-use")
    shown = _wait_status(cloud, "e2e-gone", "in-use")
    assert shown["attachments"][0]["device"] == "/dev/vdc"
    listed = osc(cloud, "--os-compute-api-version", "2.89", "server", "volume", "list",
                 "e2e-vol-server")  # fmt: skip
    assert {v["Volume ID"]: v["Device"] for v in listed} == {
        kept["id"]: "/dev/vdb",
        gone["id"]: "/dev/vdc",
    }
    assert {v["Volume ID"]: v["Tag"] for v in listed}[gone["id"]] == "logs"
    osc(cloud, "server", "remove", "volume", "e2e-vol-server", "e2e-kept", "--no-output")
    _wait_status(cloud, "e2e-kept", "available")
    # The server's delete detaches the rest and deletes the volume marked for it.
    osc(cloud, "server", "delete", "--wait", "e2e-vol-server", "--no-output")
    assert [v["Name"] for v in osc(cloud, "volume", "list")] == ["e2e-kept"]
    osc(cloud, "volume", "delete", "e2e-kept", "--no-output")


def test_server_volume_update_delete_on_termination(cloud: RunningCloud) -> None:
    """``server volume update`` (2.85): the attachment's delete_on_termination changes; the
    server's delete then deletes the volume."""
    osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE, "--wait",
        "e2e-upd-server")  # fmt: skip
    vol = osc(cloud, "volume", "create", "--size", "1", "e2e-upd")
    _wait_status(cloud, "e2e-upd", "available")
    osc(cloud, "server", "add", "volume", "e2e-upd-server", "e2e-upd", "--no-output")
    _wait_status(cloud, "e2e-upd", "in-use")

    def flags() -> dict[str, object]:
        listed = osc(cloud, "--os-compute-api-version", "2.85", "server", "volume", "list",
                     "e2e-upd-server")  # fmt: skip
        return {v["Volume ID"]: v["Delete On Termination?"] for v in listed}

    assert flags() == {vol["id"]: False}
    update = ("--os-compute-api-version", "2.85", "server", "volume", "update")
    osc(cloud, *update, "--delete-on-termination", "e2e-upd-server", vol["id"], "--no-output")
    assert flags() == {vol["id"]: True}
    osc(cloud, *update, "--preserve-on-termination", "e2e-upd-server", vol["id"], "--no-output")
    assert flags() == {vol["id"]: False}
    osc(cloud, *update, "--delete-on-termination", "e2e-upd-server", vol["id"], "--no-output")
    osc(cloud, "server", "delete", "--wait", "e2e-upd-server", "--no-output")
    assert [v["Name"] for v in osc(cloud, "volume", "list")] == []
