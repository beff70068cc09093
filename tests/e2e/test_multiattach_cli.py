"""The unchanged ``openstack`` CLI with a multiattach volume of the all-in-one's volume
service (decision 0075): ``volume type create --property multiattach="<is> True"``, ``volume
create --type``, ``server add volume`` to two servers at compute API 2.60, the volume in use
by both, a detach leaving the other's attachment; a type in use cannot be deleted."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RunningCloud
from tests.e2e.test_openstack_cli import osc
from tests.e2e.test_volume_cli import IMAGE, _wait_status


def _refused(cloud: RunningCloud, *args: str) -> str:
    """The CLI's error output of a command that must fail."""
    with pytest.raises(AssertionError) as failed:
        osc(cloud, *args, "--no-output")
    return str(failed.value)


def _attached_to(cloud: RunningCloud, volume: str, count: int) -> dict[str, object]:
    shown = _wait_status(cloud, volume, "in-use")
    while len(shown["attachments"]) != count:  # type: ignore[arg-type]
        shown = _wait_status(cloud, volume, "in-use")  # bounded by _wait_status's deadline
    return shown


def test_one_volume_on_two_servers(cloud: RunningCloud) -> None:
    vtype = osc(cloud, "volume", "type", "create", "--property", "multiattach=<is> True",
                "e2e-multiattach")  # fmt: skip
    assert vtype["properties"] == {"multiattach": "<is> True"}, vtype
    made = osc(cloud, "volume", "create", "--size", "1", "--type", "e2e-multiattach", "e2e-shared")
    assert made["multiattach"] is True and made["type"] == "e2e-multiattach", made
    _wait_status(cloud, "e2e-shared", "available")
    servers = ("e2e-ma-1", "e2e-ma-2")
    for name in servers:
        osc(cloud, "server", "create", "--flavor", "m1.tiny", "--image", IMAGE, "--wait", name)
    old = _refused(cloud, "--os-compute-api-version", "2.59", "server", "add", "volume",
                   servers[0], "e2e-shared")  # fmt: skip
    assert "Multiattach volumes are only supported starting with compute API version 2.60" in old
    for name in servers:
        osc(cloud, "--os-compute-api-version", "2.60", "server", "add", "volume", name,
            "e2e-shared", "--no-output")  # fmt: skip
        _attached_to(cloud, "e2e-shared", servers.index(name) + 1)
    shown = _attached_to(cloud, "e2e-shared", 2)
    ids = {osc(cloud, "server", "show", n)["id"] for n in servers}
    assert {a["server_id"] for a in shown["attachments"]} == ids  # type: ignore[union-attr]
    osc(cloud, "server", "remove", "volume", servers[0], "e2e-shared", "--no-output")
    _attached_to(cloud, "e2e-shared", 1)
    assert "still in use" in _refused(cloud, "volume", "type", "delete", "e2e-multiattach")
    for name in servers:
        osc(cloud, "server", "delete", "--wait", name, "--no-output")
    _wait_status(cloud, "e2e-shared", "available")
    osc(cloud, "volume", "delete", "e2e-shared", "--no-output")
    osc(cloud, "volume", "type", "delete", "e2e-multiattach", "--no-output")
