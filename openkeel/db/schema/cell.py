"""Tables of Nova's cell ("main") database (``[database] connection``).

One ``sqlalchemy.Table`` per table, named as the table, mirroring
``nova/db/main/models.py`` of Nova 34.0.0 (constraint and index names
included), plus the ``shadow_<table>`` archive copies Nova's migrations
create. Used by the cell-DB repositories and by the ``cell`` Alembic tree.
"""

from __future__ import annotations

import sqlalchemy as sa

from openkeel.db.schema.columns import (
    MYSQL_TABLE_OPTIONS,
    NAMING_CONVENTION,
    cidr,
    id_column,
    ip_address,
    medium_text,
    soft_delete_columns,
    timestamp_columns,
    utcnow,
)
from openkeel.db.schema.shadow import shadow_table

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


def _instance_uuid_fk(name: str, *, nullable: bool = True) -> sa.Column[str]:
    """``instance_uuid`` referencing ``instances.uuid`` (FK named as in Nova)."""
    return sa.Column(
        "instance_uuid",
        sa.String(36),
        sa.ForeignKey("instances.uuid", name=name),
        nullable=nullable,
    )


services = sa.Table(
    "services",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=True),
    sa.Column("host", sa.String(255)),
    sa.Column("binary", sa.String(255)),
    sa.Column("topic", sa.String(255)),
    sa.Column("report_count", sa.Integer, nullable=False, default=0),
    sa.Column("disabled", sa.Boolean, default=False),
    sa.Column("disabled_reason", sa.String(255)),
    sa.Column("last_seen_up", sa.DateTime, nullable=True),
    sa.Column("forced_down", sa.Boolean, default=False),
    sa.Column("version", sa.Integer, default=0),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.UniqueConstraint("host", "topic", "deleted", name="uniq_services0host0topic0deleted"),
    sa.UniqueConstraint("host", "binary", "deleted", name="uniq_services0host0binary0deleted"),
    sa.Index("services_uuid_idx", "uuid", unique=True),
    **MYSQL_TABLE_OPTIONS,
)

compute_nodes = sa.Table(
    "compute_nodes",
    metadata,
    id_column(),
    sa.Column("service_id", sa.Integer, nullable=True),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("uuid", sa.String(36), nullable=True),
    sa.Column("vcpus", sa.Integer, nullable=False),
    sa.Column("memory_mb", sa.Integer, nullable=False),
    sa.Column("local_gb", sa.Integer, nullable=False),
    sa.Column("vcpus_used", sa.Integer, nullable=False),
    sa.Column("memory_mb_used", sa.Integer, nullable=False),
    sa.Column("local_gb_used", sa.Integer, nullable=False),
    sa.Column("hypervisor_type", medium_text(), nullable=False),
    sa.Column("hypervisor_version", sa.Integer, nullable=False),
    sa.Column("hypervisor_hostname", sa.String(255)),
    sa.Column("free_ram_mb", sa.Integer),
    sa.Column("free_disk_gb", sa.Integer),
    sa.Column("current_workload", sa.Integer),
    sa.Column("running_vms", sa.Integer),
    sa.Column("cpu_info", medium_text(), nullable=False),
    sa.Column("disk_available_least", sa.Integer),
    sa.Column("host_ip", ip_address()),
    sa.Column("supported_instances", sa.Text),
    sa.Column("metrics", sa.Text),
    sa.Column("pci_stats", sa.Text),
    sa.Column("extra_resources", sa.Text),
    sa.Column("stats", sa.Text, default="{}"),
    sa.Column("numa_topology", sa.Text),
    sa.Column("ram_allocation_ratio", sa.Float, nullable=True),
    sa.Column("cpu_allocation_ratio", sa.Float, nullable=True),
    sa.Column("disk_allocation_ratio", sa.Float, nullable=True),
    sa.Column("mapped", sa.Integer, nullable=True, default=0),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("compute_nodes_uuid_idx", "uuid", unique=True),
    sa.UniqueConstraint(
        "host",
        "hypervisor_hostname",
        "deleted",
        name="uniq_compute_nodes0host0hypervisor_hostname0deleted",
    ),
    **MYSQL_TABLE_OPTIONS,
)

certificates = sa.Table(
    "certificates",
    metadata,
    id_column(),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("file_name", sa.String(255)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("certificates_project_id_deleted_idx", "project_id", "deleted"),
    sa.Index("certificates_user_id_deleted_idx", "user_id", "deleted"),
    **MYSQL_TABLE_OPTIONS,
)

instances = sa.Table(
    "instances",
    metadata,
    id_column(),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("image_ref", sa.String(255)),
    sa.Column("kernel_id", sa.String(255)),
    sa.Column("ramdisk_id", sa.String(255)),
    sa.Column("hostname", sa.String(255)),
    sa.Column("launch_index", sa.Integer),
    sa.Column("key_name", sa.String(255)),
    sa.Column("key_data", medium_text()),
    sa.Column("power_state", sa.Integer),
    sa.Column("vm_state", sa.String(255)),
    sa.Column("task_state", sa.String(255)),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("vcpus", sa.Integer),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("ephemeral_key_uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("node", sa.String(255)),
    sa.Column("compute_id", sa.BigInteger),
    sa.Column("instance_type_id", sa.Integer),
    sa.Column("user_data", medium_text()),
    sa.Column("reservation_id", sa.String(255)),
    sa.Column("launched_at", sa.DateTime),
    sa.Column("terminated_at", sa.DateTime),
    sa.Column("availability_zone", sa.String(255)),
    sa.Column("display_name", sa.String(255)),
    sa.Column("display_description", sa.String(255)),
    sa.Column("launched_on", medium_text()),
    sa.Column("locked", sa.Boolean),
    sa.Column("locked_by", sa.Enum("owner", "admin", name="instances0locked_by")),
    sa.Column("os_type", sa.String(255)),
    sa.Column("architecture", sa.String(255)),
    sa.Column("vm_mode", sa.String(255)),
    sa.Column("uuid", sa.String(36), nullable=False),
    sa.Column("root_device_name", sa.String(255)),
    sa.Column("default_ephemeral_device", sa.String(255)),
    sa.Column("default_swap_device", sa.String(255)),
    sa.Column("config_drive", sa.String(255)),
    sa.Column("access_ip_v4", ip_address()),
    sa.Column("access_ip_v6", ip_address()),
    sa.Column("auto_disk_config", sa.Boolean),
    sa.Column("progress", sa.Integer),
    sa.Column("shutdown_terminate", sa.Boolean, default=False),
    sa.Column("disable_terminate", sa.Boolean, default=False),
    sa.Column("cell_name", sa.String(255)),
    sa.Column("cleaned", sa.Integer, default=0),
    sa.Column("hidden", sa.Boolean, default=False),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instances_project_id_idx", "project_id"),
    sa.Index("instances_project_id_deleted_idx", "project_id", "deleted"),
    sa.Index("instances_reservation_id_idx", "reservation_id"),
    sa.Index("instances_terminated_at_launched_at_idx", "terminated_at", "launched_at"),
    sa.Index("instances_uuid_deleted_idx", "uuid", "deleted"),
    sa.Index("instances_task_state_updated_at_idx", "task_state", "updated_at"),
    sa.Index("instances_host_node_deleted_idx", "host", "node", "deleted"),
    sa.Index("instances_host_deleted_cleaned_idx", "host", "deleted", "cleaned"),
    sa.Index("instances_deleted_created_at_idx", "deleted", "created_at"),
    sa.Index("instances_updated_at_project_id_idx", "updated_at", "project_id"),
    sa.Index("instances_compute_id_deleted_idx", "compute_id", "deleted"),
    sa.UniqueConstraint("uuid", name="uniq_instances0uuid"),
    **MYSQL_TABLE_OPTIONS,
)

instance_info_caches = sa.Table(
    "instance_info_caches",
    metadata,
    id_column(),
    sa.Column("network_info", medium_text()),
    _instance_uuid_fk("instance_info_caches_instance_uuid_fkey", nullable=False),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.UniqueConstraint("instance_uuid", name="uniq_instance_info_caches0instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

instance_extra = sa.Table(
    "instance_extra",
    metadata,
    id_column(),
    _instance_uuid_fk("instance_extra_instance_uuid_fkey", nullable=False),
    sa.Column("device_metadata", sa.Text),
    sa.Column("numa_topology", sa.Text),
    sa.Column("pci_requests", sa.Text),
    sa.Column("flavor", sa.Text),
    sa.Column("vcpu_model", sa.Text),
    sa.Column("migration_context", sa.Text),
    sa.Column("keypairs", sa.Text),
    sa.Column("trusted_certs", sa.Text),
    sa.Column("resources", sa.Text),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instance_extra_idx", "instance_uuid"),
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
    *soft_delete_columns(),
    sa.UniqueConstraint(
        "project_id", "resource", "deleted", name="uniq_quotas0project_id0resource0deleted"
    ),
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
    *soft_delete_columns(),
    sa.UniqueConstraint(
        "user_id",
        "project_id",
        "resource",
        "deleted",
        name="uniq_project_user_quotas0user_id0project_id0resource0deleted",
    ),
    sa.Index("project_user_quotas_project_id_deleted_idx", "project_id", "deleted"),
    sa.Index("project_user_quotas_user_id_deleted_idx", "user_id", "deleted"),
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
    *soft_delete_columns(),
    sa.Index("ix_quota_classes_class_name", "class_name"),
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
    *soft_delete_columns(),
    sa.Index("ix_quota_usages_project_id", "project_id"),
    sa.Index("ix_quota_usages_user_id_deleted", "user_id", "deleted"),
    **MYSQL_TABLE_OPTIONS,
)

reservations = sa.Table(
    "reservations",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=False),
    sa.Column(
        "usage_id",
        sa.Integer,
        sa.ForeignKey("quota_usages.id", name="reservations_ibfk_1"),
        nullable=False,
    ),
    sa.Column("project_id", sa.String(255)),
    sa.Column("user_id", sa.String(255)),
    sa.Column("resource", sa.String(255)),
    sa.Column("delta", sa.Integer, nullable=False),
    sa.Column("expire", sa.DateTime),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("ix_reservations_project_id", "project_id"),
    sa.Index("reservations_uuid_idx", "uuid"),
    sa.Index("reservations_deleted_expire_idx", "deleted", "expire"),
    sa.Index("ix_reservations_user_id_deleted", "user_id", "deleted"),
    **MYSQL_TABLE_OPTIONS,
)

block_device_mapping = sa.Table(
    "block_device_mapping",
    metadata,
    id_column(),
    _instance_uuid_fk("block_device_mapping_instance_uuid_fkey"),
    sa.Column("uuid", sa.String(36)),
    sa.Column("source_type", sa.String(255)),
    sa.Column("destination_type", sa.String(255)),
    sa.Column("guest_format", sa.String(255)),
    sa.Column("device_type", sa.String(255)),
    sa.Column("disk_bus", sa.String(255)),
    sa.Column("boot_index", sa.Integer),
    sa.Column("device_name", sa.String(255)),
    sa.Column("delete_on_termination", sa.Boolean, default=False),
    sa.Column("snapshot_id", sa.String(36)),
    sa.Column("volume_id", sa.String(36)),
    sa.Column("volume_size", sa.Integer),
    sa.Column("volume_type", sa.String(255)),
    sa.Column("image_id", sa.String(36)),
    sa.Column("no_device", sa.Boolean),
    sa.Column("connection_info", medium_text()),
    sa.Column("tag", sa.String(255)),
    sa.Column("attachment_id", sa.String(36)),
    sa.Column("encrypted", sa.Boolean, default=False),
    sa.Column("encryption_secret_uuid", sa.String(36)),
    sa.Column("encryption_format", sa.String(128)),
    sa.Column("encryption_options", sa.String(4096)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("snapshot_id", "snapshot_id"),
    sa.Index("volume_id", "volume_id"),
    sa.Index("block_device_mapping_instance_uuid_device_name_idx", "instance_uuid", "device_name"),
    sa.Index("block_device_mapping_instance_uuid_volume_id_idx", "instance_uuid", "volume_id"),
    sa.Index("block_device_mapping_instance_uuid_idx", "instance_uuid"),
    sa.UniqueConstraint("uuid", name="uniq_block_device_mapping0uuid"),
    **MYSQL_TABLE_OPTIONS,
)

share_mapping = sa.Table(
    "share_mapping",
    metadata,
    sa.Column(
        "id",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
        nullable=False,
    ),
    sa.Column("uuid", sa.String(36)),
    _instance_uuid_fk("share_mapping_instance_uuid_fkey"),
    sa.Column("share_id", sa.String(36)),
    sa.Column("status", sa.String(32)),
    sa.Column("tag", sa.String(48)),
    sa.Column("export_location", sa.Text),
    sa.Column("share_proto", sa.String(32)),
    *timestamp_columns(),
    sa.Index("share_idx", "share_id"),
    sa.Index("share_mapping_instance_uuid_share_id_idx", "instance_uuid", "share_id"),
    # Nova really names these after key_pairs.
    sa.UniqueConstraint("instance_uuid", "share_id", name="uniq_key_pairs0instance_uuid0share_id"),
    sa.UniqueConstraint("instance_uuid", "tag", name="uniq_key_pairs0instance_uuid0tag"),
    **MYSQL_TABLE_OPTIONS,
)

security_groups = sa.Table(
    "security_groups",
    metadata,
    id_column(),
    sa.Column("name", sa.String(255)),
    sa.Column("description", sa.String(255)),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.UniqueConstraint(
        "project_id", "name", "deleted", name="uniq_security_groups0project_id0name0deleted"
    ),
    **MYSQL_TABLE_OPTIONS,
)

security_group_instance_association = sa.Table(
    "security_group_instance_association",
    metadata,
    id_column(),
    sa.Column(
        "security_group_id",
        sa.Integer,
        sa.ForeignKey("security_groups.id", name="security_group_instance_association_ibfk_1"),
    ),
    _instance_uuid_fk("security_group_instance_association_instance_uuid_fkey"),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("security_group_instance_association_instance_uuid_idx", "instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

security_group_rules = sa.Table(
    "security_group_rules",
    metadata,
    id_column(),
    sa.Column("parent_group_id", sa.Integer, sa.ForeignKey("security_groups.id")),
    sa.Column("protocol", sa.String(255)),
    sa.Column("from_port", sa.Integer),
    sa.Column("to_port", sa.Integer),
    sa.Column("cidr", cidr()),
    sa.Column("group_id", sa.Integer, sa.ForeignKey("security_groups.id")),
    *timestamp_columns(),
    *soft_delete_columns(),
    **MYSQL_TABLE_OPTIONS,
)

migrations = sa.Table(
    "migrations",
    metadata,
    id_column(),
    sa.Column("source_compute", sa.String(255)),
    sa.Column("dest_compute", sa.String(255)),
    sa.Column("source_node", sa.String(255)),
    sa.Column("dest_node", sa.String(255)),
    sa.Column("dest_compute_id", sa.BigInteger),
    sa.Column("dest_host", sa.String(255)),
    sa.Column("old_instance_type_id", sa.Integer),
    sa.Column("new_instance_type_id", sa.Integer),
    _instance_uuid_fk("fk_migrations_instance_uuid"),
    sa.Column("uuid", sa.String(36), nullable=True),
    sa.Column("status", sa.String(255)),
    sa.Column(
        "migration_type",
        sa.Enum("migration", "resize", "live-migration", "evacuation", name="migration_type"),
        nullable=True,
    ),
    sa.Column("hidden", sa.Boolean, default=False),
    sa.Column("memory_total", sa.BigInteger, nullable=True),
    sa.Column("memory_processed", sa.BigInteger, nullable=True),
    sa.Column("memory_remaining", sa.BigInteger, nullable=True),
    sa.Column("disk_total", sa.BigInteger, nullable=True),
    sa.Column("disk_processed", sa.BigInteger, nullable=True),
    sa.Column("disk_remaining", sa.BigInteger, nullable=True),
    sa.Column("cross_cell_move", sa.Boolean, default=False),
    sa.Column("user_id", sa.String(255), nullable=True),
    sa.Column("project_id", sa.String(255), nullable=True),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("migrations_instance_uuid_and_status_idx", "deleted", "instance_uuid", "status"),
    sa.Index(
        "migrations_by_host_nodes_and_status_idx",
        "deleted",
        "source_compute",
        "dest_compute",
        "source_node",
        "dest_node",
        "status",
        # InnoDB caps index keys at 3072 bytes; Nova indexes 100-char prefixes.
        mysql_length={
            "source_compute": 100,
            "dest_compute": 100,
            "source_node": 100,
            "dest_node": 100,
        },
    ),
    sa.Index(
        "migrations_by_src_host_nodes_and_status_idx",
        "deleted",
        "source_compute",
        "source_node",
        "status",
    ),
    sa.Index(
        "migrations_by_dest_host_nodes_and_status_idx",
        "deleted",
        "dest_compute",
        "dest_node",
        "status",
    ),
    sa.Index("migrations_uuid", "uuid", unique=True),
    sa.Index("migrations_updated_at_idx", "updated_at"),
    sa.Index("migrations_dest_compute_id_deleted_idx", "dest_compute_id", "deleted"),
    **MYSQL_TABLE_OPTIONS,
)

virtual_interfaces = sa.Table(
    "virtual_interfaces",
    metadata,
    id_column(),
    sa.Column("address", sa.String(255)),
    sa.Column("network_id", sa.Integer),
    _instance_uuid_fk("virtual_interfaces_instance_uuid_fkey"),
    sa.Column("uuid", sa.String(36)),
    sa.Column("tag", sa.String(255)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.UniqueConstraint("address", "deleted", name="uniq_virtual_interfaces0address0deleted"),
    sa.Index("virtual_interfaces_network_id_idx", "network_id"),
    sa.Index("virtual_interfaces_instance_uuid_fkey", "instance_uuid"),
    sa.Index("virtual_interfaces_uuid_idx", "uuid"),
    **MYSQL_TABLE_OPTIONS,
)

instance_metadata = sa.Table(
    "instance_metadata",
    metadata,
    id_column(),
    sa.Column("key", sa.String(255)),
    sa.Column("value", sa.String(255)),
    _instance_uuid_fk("instance_metadata_instance_uuid_fkey"),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instance_metadata_instance_uuid_idx", "instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

instance_system_metadata = sa.Table(
    "instance_system_metadata",
    metadata,
    id_column(),
    sa.Column("key", sa.String(255), nullable=False),
    sa.Column("value", sa.String(255)),
    _instance_uuid_fk("instance_system_metadata_ibfk_1", nullable=False),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instance_uuid", "instance_uuid"),
    **MYSQL_TABLE_OPTIONS,
)

volume_usage_cache = sa.Table(
    "volume_usage_cache",
    metadata,
    id_column(),
    sa.Column("volume_id", sa.String(36), nullable=False),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("project_id", sa.String(36)),
    sa.Column("user_id", sa.String(64)),
    sa.Column("availability_zone", sa.String(255)),
    sa.Column("tot_last_refreshed", sa.DateTime),
    sa.Column("tot_reads", sa.BigInteger, default=0),
    sa.Column("tot_read_bytes", sa.BigInteger, default=0),
    sa.Column("tot_writes", sa.BigInteger, default=0),
    sa.Column("tot_write_bytes", sa.BigInteger, default=0),
    sa.Column("curr_last_refreshed", sa.DateTime),
    sa.Column("curr_reads", sa.BigInteger, default=0),
    sa.Column("curr_read_bytes", sa.BigInteger, default=0),
    sa.Column("curr_writes", sa.BigInteger, default=0),
    sa.Column("curr_write_bytes", sa.BigInteger, default=0),
    *timestamp_columns(),
    *soft_delete_columns(),
    **MYSQL_TABLE_OPTIONS,
)

s3_images = sa.Table(
    "s3_images",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=False),
    *timestamp_columns(),
    *soft_delete_columns(),
    **MYSQL_TABLE_OPTIONS,
)

instance_faults = sa.Table(
    "instance_faults",
    metadata,
    id_column(),
    _instance_uuid_fk("fk_instance_faults_instance_uuid"),
    sa.Column("code", sa.Integer, nullable=False),
    sa.Column("message", sa.String(255)),
    sa.Column("details", medium_text()),
    sa.Column("host", sa.String(255)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instance_faults_host_idx", "host"),
    sa.Index(
        "instance_faults_instance_uuid_deleted_created_at_idx",
        "instance_uuid",
        "deleted",
        "created_at",
    ),
    **MYSQL_TABLE_OPTIONS,
)

instance_actions = sa.Table(
    "instance_actions",
    metadata,
    id_column(),
    sa.Column("action", sa.String(255)),
    _instance_uuid_fk("fk_instance_actions_instance_uuid"),
    sa.Column("request_id", sa.String(255)),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("start_time", sa.DateTime, default=utcnow),
    sa.Column("finish_time", sa.DateTime),
    sa.Column("message", sa.String(255)),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("instance_uuid_idx", "instance_uuid"),
    sa.Index("request_id_idx", "request_id"),
    sa.Index("instance_actions_instance_uuid_updated_at_idx", "instance_uuid", "updated_at"),
    **MYSQL_TABLE_OPTIONS,
)

instance_actions_events = sa.Table(
    "instance_actions_events",
    metadata,
    id_column(),
    sa.Column("event", sa.String(255)),
    sa.Column("action_id", sa.Integer, sa.ForeignKey("instance_actions.id")),
    sa.Column("start_time", sa.DateTime, default=utcnow),
    sa.Column("finish_time", sa.DateTime),
    sa.Column("result", sa.String(255)),
    sa.Column("traceback", sa.Text),
    sa.Column("host", sa.String(255)),
    sa.Column("details", sa.Text),
    *timestamp_columns(),
    *soft_delete_columns(),
    **MYSQL_TABLE_OPTIONS,
)

instance_id_mappings = sa.Table(
    "instance_id_mappings",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36), nullable=False),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("ix_instance_id_mappings_uuid", "uuid"),
    **MYSQL_TABLE_OPTIONS,
)

task_log = sa.Table(
    "task_log",
    metadata,
    id_column(),
    sa.Column("task_name", sa.String(255), nullable=False),
    sa.Column("state", sa.String(255), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("period_beginning", sa.DateTime, default=utcnow, nullable=False),
    sa.Column("period_ending", sa.DateTime, default=utcnow, nullable=False),
    sa.Column("message", sa.String(255), nullable=False),
    sa.Column("task_items", sa.Integer, default=0),
    sa.Column("errors", sa.Integer, default=0),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.UniqueConstraint(
        "task_name",
        "host",
        "period_beginning",
        "period_ending",
        name="uniq_task_log0task_name0host0period_beginning0period_ending",
    ),
    sa.Index("ix_task_log_period_beginning", "period_beginning"),
    sa.Index("ix_task_log_host", "host"),
    sa.Index("ix_task_log_period_ending", "period_ending"),
    **MYSQL_TABLE_OPTIONS,
)

pci_devices = sa.Table(
    "pci_devices",
    metadata,
    id_column(),
    sa.Column("uuid", sa.String(36)),
    sa.Column(
        "compute_node_id",
        sa.Integer,
        sa.ForeignKey("compute_nodes.id", name="pci_devices_compute_node_id_fkey"),
        nullable=False,
    ),
    sa.Column("address", sa.String(12), nullable=False),
    sa.Column("vendor_id", sa.String(4), nullable=False),
    sa.Column("product_id", sa.String(4), nullable=False),
    sa.Column("dev_type", sa.String(8), nullable=False),
    sa.Column("dev_id", sa.String(255)),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("status", sa.String(36), nullable=False),
    sa.Column("request_id", sa.String(36), nullable=True),
    sa.Column("extra_info", sa.Text),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("numa_node", sa.Integer, nullable=True),
    sa.Column("parent_addr", sa.String(12), nullable=True),
    *timestamp_columns(),
    *soft_delete_columns(),
    sa.Index("ix_pci_devices_compute_node_id_deleted", "compute_node_id", "deleted"),
    sa.Index("ix_pci_devices_instance_uuid_deleted", "instance_uuid", "deleted"),
    sa.Index(
        "ix_pci_devices_compute_node_id_parent_addr_deleted",
        "compute_node_id",
        "parent_addr",
        "deleted",
    ),
    sa.UniqueConstraint(
        "compute_node_id",
        "address",
        "deleted",
        name="uniq_pci_devices0compute_node_id0address0deleted",
    ),
    **MYSQL_TABLE_OPTIONS,
)

tags = sa.Table(
    "tags",
    metadata,
    sa.Column("resource_id", sa.String(36), primary_key=True, nullable=False),
    sa.Column("tag", sa.Unicode(80), primary_key=True, nullable=False),
    sa.Index("tags_tag_idx", "tag"),
    **MYSQL_TABLE_OPTIONS,
)

console_auth_tokens = sa.Table(
    "console_auth_tokens",
    metadata,
    id_column(),
    sa.Column("token_hash", sa.String(255), nullable=False),
    sa.Column("console_type", sa.String(255), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("port", sa.Integer, nullable=False),
    sa.Column("tls_port", sa.Integer, nullable=True),
    sa.Column("internal_access_path", sa.String(255)),
    sa.Column("instance_uuid", sa.String(36), nullable=False),
    sa.Column("expires", sa.Integer, nullable=False),
    sa.Column("access_url_base", sa.String(255)),
    *timestamp_columns(),
    sa.Index("console_auth_tokens_instance_uuid_idx", "instance_uuid"),
    sa.Index("console_auth_tokens_host_expires_idx", "host", "expires"),
    sa.Index("console_auth_tokens_token_hash_instance_uuid_idx", "token_hash", "instance_uuid"),
    sa.UniqueConstraint("token_hash", name="uniq_console_auth_tokens0token_hash"),
    **MYSQL_TABLE_OPTIONS,
)

# Archive copies (``nova-manage db archive_deleted_rows``). Nova has none for
# tags, console_auth_tokens and share_mapping.
shadow_services = shadow_table(services)
shadow_compute_nodes = shadow_table(compute_nodes)
shadow_certificates = shadow_table(certificates)
shadow_instances = shadow_table(instances)
shadow_instance_info_caches = shadow_table(instance_info_caches)
shadow_instance_extra = shadow_table(instance_extra)
shadow_quotas = shadow_table(quotas)
shadow_project_user_quotas = shadow_table(project_user_quotas)
shadow_quota_classes = shadow_table(quota_classes)
shadow_quota_usages = shadow_table(quota_usages)
shadow_reservations = shadow_table(reservations)
shadow_block_device_mapping = shadow_table(block_device_mapping)
shadow_security_groups = shadow_table(security_groups)
shadow_security_group_instance_association = shadow_table(security_group_instance_association)
shadow_security_group_rules = shadow_table(security_group_rules)
shadow_migrations = shadow_table(migrations)
shadow_virtual_interfaces = shadow_table(virtual_interfaces)
shadow_instance_metadata = shadow_table(instance_metadata)
shadow_instance_system_metadata = shadow_table(instance_system_metadata)
shadow_volume_usage_cache = shadow_table(volume_usage_cache)
shadow_s3_images = shadow_table(s3_images)
shadow_instance_faults = shadow_table(instance_faults)
shadow_instance_actions = shadow_table(instance_actions)
shadow_instance_actions_events = shadow_table(instance_actions_events)
shadow_instance_id_mappings = shadow_table(instance_id_mappings)
shadow_task_log = shadow_table(task_log)
shadow_pci_devices = shadow_table(pci_devices)
