"""Tables of Nova's API database (``[api_database] connection``).

One ``sqlalchemy.Table`` per table, named as the table, mirroring
``nova/db/api/models.py`` of Nova 34.0.0 (constraint and index names included).
Used by the API-DB repositories and by the ``api`` Alembic tree.
"""

from __future__ import annotations

import sqlalchemy as sa

from openkeel.db.schema.columns import (
    MYSQL_TABLE_OPTIONS,
    NAMING_CONVENTION,
    id_column,
    medium_text,
    timestamp_columns,
)

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

aggregates = sa.Table(
    "aggregates",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    *timestamp_columns(),
    sa.Index("aggregate_uuid_idx", "uuid"),
    sa.UniqueConstraint("name", name="uniq_aggregate0name"),
    **MYSQL_TABLE_OPTIONS,
)

aggregate_hosts = sa.Table(
    "aggregate_hosts",
    metadata,
    id_column(),
    sa.Column("host", sa.String(255)),
    sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
    *timestamp_columns(),
    sa.UniqueConstraint("host", "aggregate_id", name="uniq_aggregate_hosts0host0aggregate_id"),
    **MYSQL_TABLE_OPTIONS,
)

aggregate_metadata = sa.Table(
    "aggregate_metadata",
    metadata,
    id_column(),
    sa.Column("key", sa.String(255), nullable=False),
    sa.Column("value", sa.String(255), nullable=False),
    sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
    *timestamp_columns(),
    sa.UniqueConstraint("aggregate_id", "key", name="uniq_aggregate_metadata0aggregate_id0key"),
    sa.Index("aggregate_metadata_key_idx", "key"),
    **MYSQL_TABLE_OPTIONS,
)

cell_mappings = sa.Table(
    "cell_mappings",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=False),
    sa.Column("name", sa.String(255)),
    sa.Column("transport_url", sa.Text()),
    sa.Column("database_connection", sa.Text()),
    sa.Column("disabled", sa.Boolean, default=False),
    *timestamp_columns(),
    sa.Index("uuid_idx", "uuid"),
    sa.UniqueConstraint("uuid", name="uniq_cell_mappings0uuid"),
    **MYSQL_TABLE_OPTIONS,
)

host_mappings = sa.Table(
    "host_mappings",
    metadata,
    id_column(),
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cell_mappings.id"), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    *timestamp_columns(),
    sa.Index("host_idx", "host"),
    sa.UniqueConstraint("host", name="uniq_host_mappings0host"),
    **MYSQL_TABLE_OPTIONS,
)

instance_mappings = sa.Table(
    "instance_mappings",
    metadata,
    id_column(),
    sa.Column("instance_uuid", sa.String(36), nullable=False),
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cell_mappings.id"), nullable=True),
    sa.Column("project_id", sa.String(255), nullable=False),
    sa.Column("user_id", sa.String(255), nullable=True),
    sa.Column("queued_for_delete", sa.Boolean),
    *timestamp_columns(),
    sa.Index("project_id_idx", "project_id"),
    sa.Index("instance_uuid_idx", "instance_uuid"),
    sa.UniqueConstraint("instance_uuid", name="uniq_instance_mappings0instance_uuid"),
    sa.Index("instance_mappings_user_id_project_id_idx", "user_id", "project_id"),
    **MYSQL_TABLE_OPTIONS,
)

request_specs = sa.Table(
    "request_specs",
    metadata,
    id_column(),
    sa.Column("instance_uuid", sa.String(36), nullable=False),
    sa.Column("spec", medium_text(), nullable=False),
    *timestamp_columns(),
    sa.Index("request_spec_instance_uuid_idx", "instance_uuid"),
    sa.UniqueConstraint("instance_uuid", name="uniq_request_specs0instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

flavors = sa.Table(
    "flavors",
    metadata,
    id_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("memory_mb", sa.Integer, nullable=False),
    sa.Column("vcpus", sa.Integer, nullable=False),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("flavorid", sa.String(255), nullable=False),
    sa.Column("swap", sa.Integer, nullable=False, default=0),
    sa.Column("rxtx_factor", sa.Float, default=1),
    sa.Column("vcpu_weight", sa.Integer),
    sa.Column("disabled", sa.Boolean, default=False),
    sa.Column("is_public", sa.Boolean, default=True),
    sa.Column("description", sa.Text),
    *timestamp_columns(),
    sa.UniqueConstraint("flavorid", name="uniq_flavors0flavorid"),
    sa.UniqueConstraint("name", name="uniq_flavors0name"),
    **MYSQL_TABLE_OPTIONS,
)

flavor_extra_specs = sa.Table(
    "flavor_extra_specs",
    metadata,
    id_column(),
    sa.Column("key", sa.String(255), nullable=False),
    sa.Column("value", sa.String(255)),
    sa.Column("flavor_id", sa.Integer, sa.ForeignKey("flavors.id"), nullable=False),
    *timestamp_columns(),
    sa.Index("flavor_extra_specs_flavor_id_key_idx", "flavor_id", "key"),
    sa.UniqueConstraint("flavor_id", "key", name="uniq_flavor_extra_specs0flavor_id0key"),
    # Extra spec keys are case sensitive in Nova (utf8_bin collation).
    mysql_collate="utf8mb4_bin",
    **MYSQL_TABLE_OPTIONS,
)

flavor_projects = sa.Table(
    "flavor_projects",
    metadata,
    id_column(),
    sa.Column("flavor_id", sa.Integer, sa.ForeignKey("flavors.id"), nullable=False),
    sa.Column("project_id", sa.String(255), nullable=False),
    *timestamp_columns(),
    sa.UniqueConstraint(
        "flavor_id", "project_id", name="uniq_flavor_projects0flavor_id0project_id"
    ),
    **MYSQL_TABLE_OPTIONS,
)

build_requests = sa.Table(
    "build_requests",
    metadata,
    id_column(),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("project_id", sa.String(255), nullable=False),
    sa.Column("instance", medium_text()),
    sa.Column("block_device_mappings", medium_text()),
    sa.Column("tags", sa.Text()),
    *timestamp_columns(),
    sa.Index("build_requests_instance_uuid_idx", "instance_uuid"),
    sa.Index("build_requests_project_id_idx", "project_id"),
    sa.UniqueConstraint("instance_uuid", name="uniq_build_requests0instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

key_pairs = sa.Table(
    "key_pairs",
    metadata,
    id_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("user_id", sa.String(255), nullable=False),
    sa.Column("fingerprint", sa.String(255)),
    sa.Column("public_key", sa.Text()),
    sa.Column(
        "type",
        sa.Enum("ssh", "x509", name="keypair_types"),
        nullable=False,
        server_default="ssh",
    ),
    *timestamp_columns(),
    sa.UniqueConstraint("user_id", "name", name="uniq_key_pairs0user_id0name"),
    **MYSQL_TABLE_OPTIONS,
)

instance_groups = sa.Table(
    "instance_groups",
    metadata,
    id_column(),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("uuid", sa.String(36), nullable=False),
    sa.Column("name", sa.String(255)),
    *timestamp_columns(),
    sa.UniqueConstraint("uuid", name="uniq_instance_groups0uuid"),
    **MYSQL_TABLE_OPTIONS,
)

instance_group_policy = sa.Table(
    "instance_group_policy",
    metadata,
    id_column(),
    sa.Column("policy", sa.String(255)),
    sa.Column("group_id", sa.Integer, sa.ForeignKey("instance_groups.id"), nullable=False),
    sa.Column("rules", sa.Text),
    *timestamp_columns(),
    sa.Index("instance_group_policy_policy_idx", "policy"),
    **MYSQL_TABLE_OPTIONS,
)

instance_group_member = sa.Table(
    "instance_group_member",
    metadata,
    id_column(),
    sa.Column("instance_uuid", sa.String(255)),
    sa.Column("group_id", sa.Integer, sa.ForeignKey("instance_groups.id"), nullable=False),
    *timestamp_columns(),
    sa.Index("instance_group_member_instance_idx", "instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

quotas = sa.Table(
    "quotas",
    metadata,
    id_column(),
    sa.Column("project_id", sa.String(255)),
    sa.Column("resource", sa.String(255), nullable=False),
    sa.Column("hard_limit", sa.Integer),
    *timestamp_columns(),
    sa.UniqueConstraint("project_id", "resource", name="uniq_quotas0project_id0resource"),
    **MYSQL_TABLE_OPTIONS,
)

project_user_quotas = sa.Table(
    "project_user_quotas",
    metadata,
    id_column(),
    sa.Column("project_id", sa.String(255), nullable=False),
    sa.Column("user_id", sa.String(255), nullable=False),
    sa.Column("resource", sa.String(255), nullable=False),
    sa.Column("hard_limit", sa.Integer),
    *timestamp_columns(),
    sa.UniqueConstraint(
        "user_id",
        "project_id",
        "resource",
        name="uniq_project_user_quotas0user_id0project_id0resource",
    ),
    sa.Index("project_user_quotas_project_id_idx", "project_id"),
    sa.Index("project_user_quotas_user_id_idx", "user_id"),
    **MYSQL_TABLE_OPTIONS,
)

quota_classes = sa.Table(
    "quota_classes",
    metadata,
    id_column(),
    sa.Column("class_name", sa.String(255)),
    sa.Column("resource", sa.String(255)),
    sa.Column("hard_limit", sa.Integer),
    *timestamp_columns(),
    sa.Index("quota_classes_class_name_idx", "class_name"),
    **MYSQL_TABLE_OPTIONS,
)

quota_usages = sa.Table(
    "quota_usages",
    metadata,
    id_column(),
    sa.Column("project_id", sa.String(255)),
    sa.Column("user_id", sa.String(255)),
    sa.Column("resource", sa.String(255), nullable=False),
    sa.Column("in_use", sa.Integer, nullable=False),
    sa.Column("reserved", sa.Integer, nullable=False),
    sa.Column("until_refresh", sa.Integer),
    *timestamp_columns(),
    sa.Index("quota_usages_project_id_idx", "project_id"),
    sa.Index("quota_usages_user_id_idx", "user_id"),
    **MYSQL_TABLE_OPTIONS,
)

reservations = sa.Table(
    "reservations",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=False),
    sa.Column("usage_id", sa.Integer, sa.ForeignKey("quota_usages.id"), nullable=False),
    sa.Column("project_id", sa.String(255)),
    sa.Column("user_id", sa.String(255)),
    sa.Column("resource", sa.String(255)),
    sa.Column("delta", sa.Integer, nullable=False),
    sa.Column("expire", sa.DateTime),
    *timestamp_columns(),
    sa.Index("reservations_project_id_idx", "project_id"),
    sa.Index("reservations_uuid_idx", "uuid"),
    sa.Index("reservations_expire_idx", "expire"),
    sa.Index("reservations_user_id_idx", "user_id"),
    **MYSQL_TABLE_OPTIONS,
)
