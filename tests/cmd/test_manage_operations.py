"""``openkeel manage`` against a running cloud (SQLite, in-process roles, embedded Placement
over HTTP): the cell_v2 host and instance commands, db archive/purge/online migrations and the
placement commands, each checked for its output and nova-manage's exit codes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from prometheus_client import REGISTRY

from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd.main import main as openkeel_main
from openkeel.cmd.manage import main
from openkeel.db import cells
from openkeel.db.schema import api as api_schema
from openkeel.db.schema import cell as cell_schema
from tests.conftest import CELL1_UUID, make_services
from tests.functional.conftest import Cloud, start_cloud, stop_cloud

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def placement(tmp_path: Path) -> Iterator[EmbeddedPlacement]:
    """A Placement of the test's own: every test's compute host has the same name."""
    embedded = EmbeddedPlacement(tmp_path / "placement").start()
    embedded.serve_http()  # nova-manage reaches Placement over HTTP
    yield embedded
    embedded.stop()


@pytest.fixture
def cloud(tmp_path: Path, placement: EmbeddedPlacement) -> Iterator[Cloud]:
    built = start_cloud(make_services(tmp_path), placement, f"inproc://{uuid.uuid4().hex}")
    built.add_compute("cmp1")
    yield built
    stop_cloud(built)


@pytest.fixture
def conf(cloud: Cloud, placement: EmbeddedPlacement, tmp_path: Path) -> Path:
    """A nova.conf for nova-manage: the cloud's API DB, cell1 as the local cell, Placement."""
    cell1 = cells.get_cell(cloud.services.api_db, CELL1_UUID)
    path = tmp_path / "nova.conf"
    path.write_text(
        "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"
        f"[api_database]\nconnection = {cloud.services.conf.api_database.connection}\n"
        f"[database]\nconnection = {cell1.database_connection}\n"
        f"[placement]\nendpoint_override = {placement.serve_http()}\ntoken = admin\n"
    )
    return path


def manage(conf: Path, *args: str) -> int:
    return main(["--config-file", str(conf), *args])


def boot(cloud: Cloud, name: str = "vm") -> str:
    server_id = str(cloud.boot(name)["id"])
    assert cloud.wait(server_id)["status"] == "ACTIVE"
    return server_id


def delete(cloud: Cloud, server_id: str) -> None:
    assert cloud.api.delete(f"/v2.1/servers/{server_id}").status_code == 204
    cloud.wait(server_id, gone=True)


def node_provider(cloud: Cloud) -> str:
    (provider,) = [p.uuid for p in cloud.placement.list_providers() if p.name == "cmp1-node"]
    return provider


def test_builds_are_counted_by_outcome(cloud: Cloud) -> None:
    before = REGISTRY.get_sample_value("openkeel_builds_total", {"outcome": "active"}) or 0.0
    boot(cloud)
    assert REGISTRY.get_sample_value("openkeel_builds_total", {"outcome": "active"}) == before + 1


def test_openkeel_manage_dispatches_to_nova_manage(conf: Path, capsys: Capture) -> None:
    assert openkeel_main(["manage", "--config-file", str(conf), "cell_v2", "list_cells"]) == 0
    assert "| Name |" in capsys.readouterr().out.replace("  ", " ")
    assert openkeel_main(["manage", "--config-file", str(conf), "cell_v2", "nonsense"]) == 2


# -- cell_v2 ------------------------------------------------------------------------------


def test_list_hosts_and_delete_host_exit_codes(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    assert manage(conf, "cell_v2", "list_hosts") == 0
    table = capsys.readouterr().out
    assert "| Cell Name |" in table and "Cell UUID" in table and "Hostname" in table
    (row,) = [line for line in table.splitlines() if CELL1_UUID in line]
    assert [cell.strip() for cell in row.split("|")[1:-1]] == ["cell1", CELL1_UUID, "cmp1"]
    assert manage(conf, "cell_v2", "list_hosts", "--cell_uuid", "nope") == 1
    assert capsys.readouterr().out == "Cell with uuid nope was not found.\n"
    server = boot(cloud)
    args = ("cell_v2", "delete_host", "--cell_uuid", CELL1_UUID, "--host")
    assert manage(conf, *args, "cmp1") == 4
    assert capsys.readouterr().out == "There are instances on the host cmp1.\n"
    assert manage(conf, *args, "ghost") == 2
    assert capsys.readouterr().out == "The host ghost was not found.\n"
    cell0 = cells.CELL0_UUID
    assert manage(conf, "cell_v2", "delete_host", "--cell_uuid", cell0, "--host", "cmp1") == 3
    assert capsys.readouterr().out == f"The host cmp1 was not found in the cell {cell0}.\n"
    assert manage(conf, "cell_v2", "delete_host", "--cell_uuid", "x", "--host", "cmp1") == 1
    delete(cloud, server)
    assert manage(conf, *args, "cmp1") == 0
    assert cells.host_cell_uuid(cloud.services.api_db, "cmp1") is None


def test_discover_hosts_strict_verbose_and_by_service(
    cloud: Cloud, conf: Path, capsys: Capture
) -> None:
    assert manage(conf, "cell_v2", "discover_hosts", "--strict") == 1  # nothing new
    assert manage(conf, "cell_v2", "discover_hosts") == 0
    manage(conf, "cell_v2", "delete_host", "--cell_uuid", CELL1_UUID, "--host", "cmp1")
    capsys.readouterr()
    assert manage(conf, "cell_v2", "discover_hosts", "--verbose", "--strict") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Found 2 cell mappings."
    assert out[1] == "Skipping cell0 since it does not contain hosts."
    assert out[2] == f"Getting computes from cell 'cell1': {CELL1_UUID}"
    assert out[3].startswith("Checking host mapping for compute host 'cmp1': ")
    assert out[4].startswith("Creating host mapping for compute host 'cmp1': ")
    assert out[5] == f"Found 1 unmapped computes in cell: {CELL1_UUID}"
    assert cells.host_cell_uuid(cloud.services.api_db, "cmp1") == CELL1_UUID
    manage(conf, "cell_v2", "delete_host", "--cell_uuid", CELL1_UUID, "--host", "cmp1")
    capsys.readouterr()
    by_service = ("cell_v2", "discover_hosts", "--by-service", "--cell_uuid", CELL1_UUID)
    assert manage(conf, *by_service, "--verbose", "--strict") == 0
    assert "Creating host mapping for service cmp1" in capsys.readouterr().out
    assert manage(conf, *by_service, "--strict") == 1


def test_update_cell_exit_codes(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    update = ("cell_v2", "update_cell", "--cell_uuid")
    assert manage(conf, *update, "nope") == 1
    assert capsys.readouterr().out == "Cell with uuid nope was not found.\n"
    assert manage(conf, *update, CELL1_UUID, "--name", "renamed") == 0
    assert cells.get_cell(cloud.services.api_db, CELL1_UUID).name == "renamed"
    assert manage(conf, *update, CELL1_UUID, "--disable", "--enable") == 4
    # As in Nova, the options left out fall back to the configuration's (cell1's database
    # connection here: a duplicate, 3); cell0's own URLs are no duplicate.
    assert manage(conf, *update, cells.CELL0_UUID, "--disable") == 3
    cell0 = cells.get_cell(cloud.services.api_db, cells.CELL0_UUID)
    own = ("--transport-url", "none:///", "--database_connection", str(cell0.database_connection))
    assert manage(conf, *update, cells.CELL0_UUID, *own, "--disable") == 5
    assert "Cell0 cannot be disabled." in capsys.readouterr().out
    assert manage(conf, *update, CELL1_UUID, "--disable") == 0
    assert cells.get_cell(cloud.services.api_db, CELL1_UUID).disabled
    capsys.readouterr()
    assert manage(conf, *update, CELL1_UUID, "--disable") == 0
    assert f"Cell {CELL1_UUID} is already disabled" in capsys.readouterr().out
    cell0_db = cells.get_cell(cloud.services.api_db, cells.CELL0_UUID).database_connection
    assert manage(conf, *update, CELL1_UUID, "--database_connection", str(cell0_db)) == 3
    assert "already exists for another cell with uuid 00000000-" in capsys.readouterr().out


def test_verify_instance_and_map_instances(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    first, second = boot(cloud, "a"), boot(cloud, "b")
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", first) == 0
    assert capsys.readouterr().out == f"Instance {first} is in cell: cell1 ({CELL1_UUID})\n"
    missing = str(uuid.uuid4())
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", missing, "--quiet") == 1
    assert capsys.readouterr().out == ""
    mappings = api_schema.instance_mappings
    with cloud.services.api_db.begin() as connection:
        connection.execute(sa.delete(mappings))
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", first) == 1
    mapping = ("cell_v2", "map_instances", "--cell_uuid", CELL1_UUID)
    assert manage(conf, *mapping, "--max-count", "0") == 127
    assert manage(conf, *mapping, "--max-count", "1") == 1  # more left
    assert manage(conf, *mapping, "--max-count", "1") == 1
    assert manage(conf, *mapping, "--max-count", "1") == 0
    for server in (first, second):
        assert manage(conf, "cell_v2", "verify_instance", "--uuid", server, "--quiet") == 0
    with cloud.services.api_db.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(mappings)).scalar() == 2
    delete(cloud, second)
    capsys.readouterr()
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", second) == 3
    assert capsys.readouterr().out.startswith(f"The instance with uuid {second} has been deleted.")


# -- db -------------------------------------------------------------------------------------


def shadow_count(cloud: Cloud, table: sa.Table) -> int:
    with cloud.services.cell_dbs[CELL1_UUID].connect() as connection:
        return int(connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def test_archive_deleted_rows_moves_rows_and_forgets_the_mappings(
    cloud: Cloud, conf: Path, capsys: Capture
) -> None:
    kept, gone = boot(cloud, "kept"), boot(cloud, "gone")
    delete(cloud, gone)
    archive = ("db", "archive_deleted_rows")
    assert manage(conf, *archive, "--max_rows", "-1") == 2
    assert manage(conf, *archive, "--before", "not a date at all") == 4
    assert capsys.readouterr().out.startswith("Must supply a positive value for max_rows\n")
    assert manage(conf, *archive, "--before", "2000-01-01", "--verbose") == 0
    assert capsys.readouterr().out == "Nothing was archived.\n"
    assert manage(conf, *archive, "--verbose") == 1
    table = capsys.readouterr().out
    assert "| Table" in table and "| Number of Rows Archived |" in table
    assert "| instances " in table and "| API_DB.instance_mappings " in table
    assert "| API_DB.request_specs " in table and "| instance_extra " in table
    assert shadow_count(cloud, cell_schema.shadow_instances) == 1
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", gone, "--quiet") == 1
    assert manage(conf, "cell_v2", "verify_instance", "--uuid", kept, "--quiet") == 0
    assert manage(conf, *archive) == 0  # nothing left


def test_archive_until_complete_all_cells_then_purge(
    cloud: Cloud, conf: Path, capsys: Capture
) -> None:
    for name in ("a", "b", "c"):
        delete(cloud, boot(cloud, name))
    args = ("db", "archive_deleted_rows", "--all-cells", "--until-complete", "--verbose")
    assert manage(conf, *args, "--max_rows", "2") == 1
    out = capsys.readouterr().out
    assert out.startswith("Archiving..") and ".complete\n" in out
    assert "| cell1.instances " in out
    assert shadow_count(cloud, cell_schema.shadow_instances) == 3
    assert manage(conf, "db", "purge") == 1
    assert capsys.readouterr().out == "Either --before or --all is required\n"
    assert manage(conf, "db", "purge", "--before", "not a date at all") == 2
    assert manage(conf, "db", "purge", "--before", "2000-01-01") == 3  # nothing that old
    capsys.readouterr()
    assert manage(conf, "db", "purge", "--all", "--all-cells", "--verbose") == 0
    out = capsys.readouterr().out
    assert f"Cell {CELL1_UUID}(cell1): Deleted 3 rows from shadow_instances" in out
    assert shadow_count(cloud, cell_schema.shadow_instances) == 0
    assert manage(conf, "db", "purge", "--all") == 3


def test_archive_with_purge_and_task_log(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    delete(cloud, boot(cloud))
    with cloud.services.cell_dbs[CELL1_UUID].begin() as connection:
        connection.execute(
            sa.insert(cell_schema.task_log).values(
                task_name="instance_usage_audit", state="DONE", host="cmp1", message="",
                period_beginning=sa.func.now(), period_ending=sa.func.now(),
            )
        )  # fmt: skip
    assert manage(conf, "db", "archive_deleted_rows", "--purge", "--verbose") == 1
    out = capsys.readouterr().out
    assert "Rows were archived, running purge..." in out and "task_log" not in out
    assert shadow_count(cloud, cell_schema.shadow_instances) == 0
    assert manage(conf, "db", "archive_deleted_rows", "--task-log", "--verbose") == 1
    assert "| task_log " in capsys.readouterr().out
    assert shadow_count(cloud, cell_schema.shadow_task_log) == 1


def test_online_data_migrations_has_nothing_to_do(conf: Path, capsys: Capture) -> None:
    assert manage(conf, "db", "online_data_migrations") == 0
    assert capsys.readouterr().out == (
        "Running batches of 50 until complete\n"
        "+-----------+--------------+-----------+\n"
        "| Migration | Total Needed | Completed |\n"
        "+-----------+--------------+-----------+\n"
        "+-----------+--------------+-----------+\n"
    )
    assert manage(conf, "db", "online_data_migrations", "--max-count", "0") == 127


# -- placement ------------------------------------------------------------------------------


def test_heal_allocations(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    server = boot(cloud)
    heal = ("placement", "heal_allocations", "--verbose")
    assert manage(conf, *heal) == 4  # every allocation is there
    assert f"The allocation of instance {server} is up-to-date" in capsys.readouterr().out
    assert manage(conf, "placement", "heal_allocations", "--force") == 127
    assert manage(conf, "placement", "heal_allocations", "--max-count", "x") == 127
    assert manage(conf, "placement", "heal_allocations", "--instance", str(uuid.uuid4())) == 127
    cloud.placement.delete_allocations(server, force=True)
    capsys.readouterr()
    assert manage(conf, *heal, "--dry-run") == 4
    assert f"[dry-run] Create allocations for instance {server}: " in capsys.readouterr().out
    assert not cloud.placement.get_allocations(server).allocations
    assert manage(conf, *heal, "--instance", server) == 0
    assert f"Successfully created allocations for instance {server}." in capsys.readouterr().out
    allocations = cloud.placement.get_allocations(server).allocations
    assert allocations == {node_provider(cloud): {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}


def test_audit_finds_and_deletes_orphaned_allocations(
    cloud: Cloud, conf: Path, capsys: Capture
) -> None:
    server = boot(cloud)
    provider = node_provider(cloud)
    assert manage(conf, "placement", "audit") == 0
    orphan = str(uuid.uuid4())
    cloud.placement.claim(orphan, {provider: {"VCPU": 1}}, project_id="p", user_id="u")
    assert manage(conf, "placement", "audit", "--verbose") == 3
    out = capsys.readouterr().out
    assert f"Allocations for consumer UUID {orphan} on Resource Provider {provider} can be " in out
    assert server not in out and "Processed 1 allocation." in out
    assert manage(conf, "placement", "audit", "--delete", "--resource_provider", provider) == 4
    assert not cloud.placement.get_allocations(orphan).allocations
    assert cloud.placement.get_allocations(server).allocations
    assert manage(conf, "placement", "audit", "--resource_provider", str(uuid.uuid4())) == 127
    assert "does not exist." in capsys.readouterr().out


def test_sync_aggregates(cloud: Cloud, conf: Path, capsys: Capture) -> None:
    body = {"aggregate": {"name": "agg1"}}
    created = cloud.api.post("/v2.1/os-aggregates", body, version="2.41").json()["aggregate"]
    action = {"add_host": {"host": "cmp1"}}
    agg_id = created["id"]
    assert cloud.api.post(f"/v2.1/os-aggregates/{agg_id}/action", action).status_code == 200
    provider = node_provider(cloud)
    cloud.placement.set_aggregates(provider, [])
    assert manage(conf, "placement", "sync_aggregates", "--verbose") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "Filling in missing placement aggregates",
        "Processing aggregate: agg1",
        "Processing host: cmp1",
    ]
    assert out[3].startswith(f"Successfully added host (cmp1) and provider ({provider})")
    assert cloud.placement.get_aggregates(provider) == {created["uuid"]}
    with cloud.services.api_db.begin() as connection:
        connection.execute(
            sa.insert(api_schema.aggregate_hosts).values(host="unmapped", aggregate_id=agg_id)
        )
    assert manage(conf, "placement", "sync_aggregates") == 4
    assert "Missing: unmapped" in capsys.readouterr().out
