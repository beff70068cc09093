"""``nova-manage`` commands: messages and exit codes as Nova's (SQLite databases)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openkeel.cmd.manage import main, render_table
from openkeel.db import cells, migrate
from openkeel.db.engine import make_engine

RABBIT = "rabbit://guest:secret@127.0.0.1:5672/"


def write_conf(tmp_path: Path, *, transport_url: str | None = RABBIT, api: bool = True) -> Path:
    lines = ["[DEFAULT]"]
    if transport_url:
        lines.append(f"transport_url = {transport_url}")
    if api:
        lines += ["[api_database]", f"connection = sqlite:///{tmp_path / 'nova_api.sqlite'}"]
    lines += ["[database]", f"connection = sqlite:///{tmp_path / 'nova.sqlite'}"]
    path = tmp_path / "nova.conf"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    return write_conf(tmp_path)


def manage(conf: Path, *args: str) -> int:
    return main(["--config-file", str(conf), *args])


def test_api_db_sync_and_db_sync_migrate_both_databases(
    conf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert manage(conf, "api_db", "sync") == 0
    assert manage(conf, "db", "sync") == 0
    assert "WARNING: cell0 mapping not found - not syncing cell0." in capsys.readouterr().out
    for name, tree in (("nova_api", "api"), ("nova", "cell")):
        url = f"sqlite:///{tmp_path / name}.sqlite"
        assert migrate.current_revision(url) == migrate.head_revision(tree)  # type: ignore[arg-type]


def test_db_sync_also_syncs_cell0_once_mapped(conf: Path, tmp_path: Path) -> None:
    assert manage(conf, "api_db", "sync") == 0
    assert manage(conf, "cell_v2", "map_cell0") == 0
    assert manage(conf, "db", "sync") == 0
    cell0 = f"sqlite:///{tmp_path / 'nova_cell0.sqlite'}"
    assert migrate.current_revision(cell0) == migrate.head_revision("cell")


def test_db_sync_fails_with_1_when_the_api_database_is_not_synced(
    conf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert manage(conf, "db", "sync") == 1
    assert capsys.readouterr().out.startswith("ERROR: Could not access cell0.")
    assert manage(conf, "db", "sync", "--local_cell") == 0


def test_api_db_sync_without_connection_is_an_unexpected_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert manage(write_conf(tmp_path, api=False), "api_db", "sync") == 255
    assert capsys.readouterr().out.startswith("An error has occurred:\nTraceback")


def test_map_cell0_twice_succeeds_and_says_so(
    conf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manage(conf, "api_db", "sync")
    assert manage(conf, "cell_v2", "map_cell0") == 0
    assert capsys.readouterr().out == ""
    assert manage(conf, "cell_v2", "map_cell0", "--database_connection", "sqlite:////x") == 0
    assert capsys.readouterr().out == "Cell0 is already setup\n"


def test_create_cell_exit_codes(
    conf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manage(conf, "api_db", "sync")
    assert manage(conf, "cell_v2", "create_cell", "--name", "cell1", "--verbose") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("--transport-url not provided in the command line")
    assert out[1].startswith("--database_connection not provided in the command line")
    assert len(out[2]) == 36  # the new cell's uuid
    assert manage(conf, "cell_v2", "create_cell", "--name", "again") == 2
    assert f"already exists for another cell with uuid {out[2]}." in capsys.readouterr().out
    assert manage(conf, "cell_v2", "create_cell", "--transport-url", "nonsense") == 1
    assert capsys.readouterr().out == "Invalid transport URL: No scheme specified\n"
    no_mq = write_conf(tmp_path, transport_url=None)
    assert manage(no_mq, "cell_v2", "create_cell") == 1
    assert capsys.readouterr().out.startswith("Must specify --transport-url")


def test_list_cells_masks_passwords_unless_verbose(
    conf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manage(conf, "api_db", "sync")
    manage(conf, "cell_v2", "map_cell0")
    manage(conf, "cell_v2", "create_cell", "--name", "cell1", "--disabled")
    capsys.readouterr()
    assert manage(conf, "cell_v2", "list_cells") == 0
    table = capsys.readouterr().out
    assert "rabbit://guest:****@127.0.0.1:5672/" in table and "secret" not in table
    assert "none:/ " in table and "True" in table
    assert manage(conf, "cell_v2", "list_cells", "--verbose") == 0
    assert RABBIT in capsys.readouterr().out


def test_render_table_matches_prettytable_layout() -> None:
    assert render_table(["Name", "Disabled"], [["cell0", "False"]]) == (
        "+-------+----------+\n"
        "|  Name | Disabled |\n"
        "+-------+----------+\n"
        "| cell0 |  False   |\n"
        "+-------+----------+"
    )


def test_delete_cell_exit_codes(
    conf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manage(conf, "api_db", "sync")
    manage(conf, "db", "sync", "--local_cell")
    assert manage(conf, "cell_v2", "delete_cell", "--cell_uuid", "nope") == 1
    assert capsys.readouterr().out == "Cell with uuid nope was not found.\n"
    api = make_engine(f"sqlite:///{tmp_path / 'nova_api.sqlite'}")
    cell = cells.create_cell(
        api,
        name="c",
        transport_url=RABBIT,
        database_connection=f"sqlite:///{tmp_path / 'nova.sqlite'}",
    )
    cells.map_hosts(api, cell, ["compute1"])
    api.dispose()
    assert manage(conf, "cell_v2", "delete_cell", "--cell_uuid", cell.uuid) == 2
    assert manage(conf, "cell_v2", "delete_cell", "--cell_uuid", cell.uuid, "--force") == 0


def test_simple_cell_setup_without_hosts_exits_1(
    conf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manage(conf, "api_db", "sync")
    manage(conf, "db", "sync", "--local_cell")
    capsys.readouterr()
    assert manage(conf, "cell_v2", "simple_cell_setup") == 1
    assert capsys.readouterr().out.splitlines()[1:] == ["No hosts found to map to cell, exiting."]
    assert manage(conf, "cell_v2", "simple_cell_setup", "--transport-url", RABBIT) == 1
    assert capsys.readouterr().out.splitlines() == [
        "Cell0 is already setup",
        "No hosts found to map to cell, exiting.",
    ]


def test_usage_errors_exit_2(conf: Path) -> None:
    assert manage(conf, "cell_v2", "no_such_action") == 2
    assert manage(conf, "cell_v2", "delete_cell") == 2


def test_identity_bootstrap_makes_an_admin_who_can_log_in(conf: Path, tmp_path: Path) -> None:
    from openkeel.db.identity_store import IdentityStore

    args = ("identity", "bootstrap", "--bootstrap-password", "pw1")
    assert manage(conf, *args) == 0
    assert manage(conf, "identity", "bootstrap", "--bootstrap-password", "other") == 0
    store = IdentityStore(make_engine(f"sqlite:///{tmp_path / 'nova_api.sqlite'}"))
    admin = store.find_user("admin")
    assert admin is not None
    assert store.check_password(admin.id, "pw1")  # a second bootstrap keeps the password
    assert not store.check_password(admin.id, "other")
    project = store.find_project("admin")
    assert project is not None and admin.default_project_id == project.id
    assert [r.name for r in store.roles_on(admin.id, project.id)] == ["admin"]
    assert {r.name for r in store.roles()} == {"admin", "manager", "member", "reader", "service"}
