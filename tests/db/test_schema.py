"""Table definitions match Nova 34.0.0's models: table sets, shadow tables, defaults."""

from __future__ import annotations

import datetime

import sqlalchemy as sa

from openkeel.db.schema import api, cell
from openkeel.db.schema.columns import utcnow

API_TABLES = {
    "flavors", "flavor_extra_specs", "flavor_projects", "key_pairs", "quotas", "quota_classes",
    "project_user_quotas", "quota_usages", "reservations", "cell_mappings", "host_mappings",
    "instance_mappings", "build_requests", "request_specs", "instance_groups",
    "instance_group_policy", "instance_group_member", "aggregates", "aggregate_hosts",
    "aggregate_metadata",
}  # fmt: skip
CELL_TABLES = {
    "block_device_mapping", "certificates", "compute_nodes", "console_auth_tokens",
    "instance_actions", "instance_actions_events", "instance_extra", "instance_faults",
    "instance_id_mappings", "instance_info_caches", "instance_metadata",
    "instance_system_metadata", "instances", "migrations", "pci_devices", "project_user_quotas",
    "quota_classes", "quota_usages", "quotas", "reservations", "s3_images",
    "security_group_instance_association", "security_group_rules", "security_groups",
    "services", "share_mapping", "tags", "task_log", "virtual_interfaces", "volume_usage_cache",
}  # fmt: skip
# Nova creates no archive copy of these.
UNSHADOWED = {"tags", "console_auth_tokens", "share_mapping"}


def test_api_schema_has_nova_api_tables_as_module_attributes() -> None:
    assert set(api.metadata.tables) == API_TABLES
    for name in API_TABLES:
        assert getattr(api, name) is api.metadata.tables[name]


def test_cell_schema_has_nova_main_tables_and_their_shadows() -> None:
    shadows = {f"shadow_{name}" for name in CELL_TABLES - UNSHADOWED}
    assert set(cell.metadata.tables) == CELL_TABLES | shadows
    for name in CELL_TABLES | shadows:
        assert getattr(cell, name) is cell.metadata.tables[name]


def test_shadow_tables_copy_columns_without_constraints() -> None:
    for name in CELL_TABLES - UNSHADOWED:
        live, shadow = cell.metadata.tables[name], cell.metadata.tables[f"shadow_{name}"]
        assert [c.name for c in shadow.columns] == [c.name for c in live.columns]
        assert [c.nullable for c in shadow.columns] == [c.nullable for c in live.columns]
        assert not shadow.indexes
        assert not shadow.foreign_keys
        assert not [c for c in shadow.constraints if isinstance(c, sa.UniqueConstraint)]


def test_soft_deletable_cell_tables_have_nova_soft_delete_columns() -> None:
    without = {name for name in CELL_TABLES if "deleted" not in cell.metadata.tables[name].c}
    assert without == {"console_auth_tokens", "share_mapping", "tags"}
    assert cell.instances.c.deleted.default is not None
    assert cell.instances.c.deleted.default.arg == 0  # type: ignore[attr-defined]


def test_created_at_defaults_to_naive_utc_now() -> None:
    before = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    value = utcnow()
    assert value.tzinfo is None
    assert before <= value <= before + datetime.timedelta(seconds=5)
    for table in (api.flavors, cell.instances):
        default = table.c.created_at.default
        assert default is not None and default.is_callable


def test_key_pair_type_is_a_named_enum_defaulting_to_ssh() -> None:
    column = api.key_pairs.c.type
    assert isinstance(column.type, sa.Enum)
    assert column.type.name == "keypair_types"
    assert column.type.enums == ["ssh", "x509"]
    assert column.server_default is not None


def test_medium_text_columns_are_mediumtext_on_mysql_only() -> None:
    from sqlalchemy.dialects import mysql, sqlite

    spec_type = api.request_specs.c.spec.type
    assert spec_type.compile(dialect=mysql.dialect()) == "MEDIUMTEXT"
    assert spec_type.compile(dialect=sqlite.dialect()) == "TEXT"
