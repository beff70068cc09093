"""The all-in-one's own defaults give way to a config file, and simulated hosts keep the node
name they registered with (a data dir from the ``fake-mini`` days keeps its servers)."""

from __future__ import annotations

from pathlib import Path

from openkeel.cmd import all_in_one, preflight
from openkeel.cmd.roles import node_name
from openkeel.conf import make_config
from openkeel.db.engine import make_engine
from openkeel.db.repositories import compute_nodes
from openkeel.db.schema import cell as cell_schema
from openkeel.virt.loading import compute_hosts


def _load(root: Path, *files: str) -> object:
    return preflight.load_config(
        list(files),
        overrides=all_in_one._overrides(root, None),
        defaults=all_in_one._defaults(root),
    )


def test_defaults_stand_unless_a_config_file_sets_them(tmp_path: Path) -> None:
    conf = _load(tmp_path)
    assert conf.api.auth_strategy == "embedded"  # type: ignore[attr-defined]
    assert conf.allow_resize_to_same_host is True  # type: ignore[attr-defined]
    assert conf.log_file == str(tmp_path / "openkeel.log")  # type: ignore[attr-defined]
    settings = tmp_path / "mine.conf"
    settings.write_text(
        "[DEFAULT]\nallow_resize_to_same_host = false\n[api]\nauth_strategy = keystone\n"
        "[database]\nconnection = sqlite:////elsewhere.sqlite\n"
    )
    conf = _load(tmp_path, str(settings))
    assert conf.api.auth_strategy == "keystone"  # type: ignore[attr-defined]
    assert conf.allow_resize_to_same_host is False  # type: ignore[attr-defined]
    # the data directory still decides where the databases are
    assert conf.database.connection == f"sqlite:///{tmp_path / 'nova.sqlite'}"  # type: ignore[attr-defined]


def test_simulated_hosts_are_named_after_the_first(tmp_path: Path) -> None:
    conf = make_config(overrides={"host": "vm"})
    assert compute_hosts(conf) == ["vm"]
    assert compute_hosts(conf, 3) == ["vm", "vm-2", "vm-3"]


def test_a_host_keeps_the_node_it_registered_with(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'cell.sqlite'}")
    cell_schema.metadata.create_all(engine)
    assert node_name(engine, "vm") == "vm"
    with engine.begin() as conn:
        compute_nodes.create_compute_node(conn, "vm", "fake-mini")
    assert node_name(engine, "vm") == "fake-mini"
    assert node_name(engine, "vm-2") == "vm-2"
