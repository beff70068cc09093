"""``openkeel status upgrade check``: nova-status's checks that apply, its table and --json,
and its exit codes (0 success, 1 warning, 2 failure, 255 a check broke)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd.main import main
from openkeel.db import cells
from openkeel.db.engine import make_engine
from openkeel.db.schema import cell as cell_schema

Capture = pytest.CaptureFixture[str]
RABBIT = "rabbit://guest:guest@127.0.0.1:5672/"


@pytest.fixture
def placement(tmp_path: Path) -> Iterator[str]:
    embedded = EmbeddedPlacement(tmp_path / "placement").start()
    yield embedded.serve_http()
    embedded.stop()


def write_conf(tmp_path: Path, placement_url: str | None, policy_file: str | None = None) -> Path:
    text = (
        f"[api_database]\nconnection = sqlite:///{tmp_path / 'api.sqlite'}\n"
        f"[database]\nconnection = sqlite:///{tmp_path / 'cell1.sqlite'}\n"
    )
    if placement_url:
        text += f"[placement]\nendpoint_override = {placement_url}\n"
    if policy_file:
        text += f"[oslo_policy]\npolicy_file = {policy_file}\n"
    path = tmp_path / "nova.conf"
    path.write_text(text)
    return path


def status(conf: Path, *args: str) -> int:
    return main(["status", "--config-file", str(conf), "upgrade", "check", *args])


def results(out: str) -> dict[str, tuple[str, str | None]]:
    document = json.loads(out)
    assert document["name"] == "Upgrade Check Results"
    return {c["check"]: (c["result"], c["details"]) for c in document["checks"]}


def deploy(tmp_path: Path) -> sa.Engine:
    """API DB synced, cell0 and cell1 mapped (cell1's database synced)."""
    api_url = f"sqlite:///{tmp_path / 'api.sqlite'}"
    cells.sync_api_db(api_url)
    api = make_engine(api_url)
    cells.map_cell0(api, f"sqlite:///{tmp_path / 'cell0.sqlite'}")
    cell1_url = f"sqlite:///{tmp_path / 'cell1.sqlite'}"
    cells.sync_cell_db(cell1_url)
    cells.create_cell(api, name="cell1", transport_url=RABBIT, database_connection=cell1_url)
    return api


def test_fresh_deployment_passes_with_a_reminder(
    tmp_path: Path, placement: str, capsys: Capture
) -> None:
    deploy(tmp_path).dispose()
    conf = write_conf(tmp_path, placement)
    assert status(conf) == 0
    table = capsys.readouterr().out
    assert table.startswith("+---")
    assert "| Upgrade Check Results" in table
    assert "| Check: Cells v2" in table and "| Result: Success" in table
    assert "| Check: Placement API" in table and "| Details: None" in table
    assert status(conf, "--json") == 0
    found = results(capsys.readouterr().out)
    assert found["Cells v2"][0] == 0 and "discover_hosts" in str(found["Cells v2"][1])
    assert found["Placement API"] == (0, None)
    assert found["Policy File JSON to YAML Migration"] == (0, None)
    assert found["Older than N-1 computes"] == (0, None)


def test_unmapped_cells_and_unreachable_placement_fail_with_2(
    tmp_path: Path, capsys: Capture
) -> None:
    cells.sync_api_db(f"sqlite:///{tmp_path / 'api.sqlite'}")
    conf = write_conf(tmp_path, "http://127.0.0.1:9")
    assert status(conf, "--json") == 2
    found = results(capsys.readouterr().out)
    assert found["Cells v2"][0] == 2 and "at least two cell mappings" in str(found["Cells v2"][1])
    assert found["Placement API"] == (2, "Discovery for placement API URI failed.")
    conf = write_conf(tmp_path, None)
    assert status(conf, "--json") == 2
    assert results(capsys.readouterr().out)["Placement API"][1] == (
        "Placement API endpoint not found."
    )


def test_compute_nodes_without_host_mappings_and_old_computes_fail(
    tmp_path: Path, placement: str, capsys: Capture
) -> None:
    deploy(tmp_path).dispose()
    cell1 = make_engine(f"sqlite:///{tmp_path / 'cell1.sqlite'}")
    with cell1.begin() as connection:
        connection.execute(sa.insert(cell_schema.services).values(
            host="c1", binary="nova-compute", topic="compute", report_count=0, disabled=False,
            version=61, deleted=0))  # fmt: skip
        connection.execute(sa.insert(cell_schema.compute_nodes).values(
            host="c1", hypervisor_hostname="c1", vcpus=1, memory_mb=1, local_gb=1, vcpus_used=0,
            memory_mb_used=0, local_gb_used=0, hypervisor_type="fake", hypervisor_version=1,
            cpu_info="{}", deleted=0))  # fmt: skip
    cell1.dispose()
    assert status(write_conf(tmp_path, placement), "--json") == 2
    found = results(capsys.readouterr().out)
    assert found["Cells v2"] == (
        2,
        "No host mappings found but there are compute nodes. Run command 'nova-manage cell_v2 "
        "simple_cell_setup' and then retry.",
    )
    assert found["Older than N-1 computes"][0] == 2
    assert "minimum compute service level in your system is 61" in str(
        found["Older than N-1 computes"][1]
    )


def test_json_policy_file_fails_the_policy_check(
    tmp_path: Path, placement: str, capsys: Capture
) -> None:
    deploy(tmp_path).dispose()
    policy_file = tmp_path / "policy.json"
    policy_file.write_text('{"context_is_admin": "role:admin"}')
    assert status(write_conf(tmp_path, placement, str(policy_file)), "--json") == 2
    found = results(capsys.readouterr().out)
    assert found["Policy File JSON to YAML Migration"][0] == 2


def test_a_broken_check_exits_255(tmp_path: Path, capsys: Capture) -> None:
    conf = tmp_path / "nova.conf"
    conf.write_text("[placement]\nendpoint_override = http://127.0.0.1:9\n")  # no API database
    assert status(conf) == 255
    assert capsys.readouterr().out.startswith("Error:")
