"""Tables of the embedded network service (a Neutron v2.0 subset, decision 0041).

Networks, subnets, ports, the IP addresses they hold, security groups and their rules, each
project's default security group, and floating IPs: in the API database, in their own MetaData
outside Nova's schema (as the image and identity services' tables). Documents Neutron keeps as
lists (fixed IPs, allocation pools, DNS servers, security groups of a port) are JSON text.
The primary key of ``openkeel_net_ip_allocations`` (network, address) is what makes two
concurrent allocations of one address impossible, in any process.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from openkeel.db.lazy_tables import create_missing

metadata = sa.MetaData()


def _common(*columns: sa.Column[Any]) -> list[sa.Column[Any]]:
    """Neutron's standard attributes around a resource's own columns."""
    return [
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(255), nullable=False, default=""),
        sa.Column("project_id", sa.String(255), nullable=False, index=True),
        sa.Column("description", sa.String(255), nullable=False, default=""),
        *columns,
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("revision_number", sa.Integer, nullable=False, default=0),
    ]


networks_table = sa.Table(
    "openkeel_net_networks",
    metadata,
    *_common(
        sa.Column("admin_state_up", sa.Boolean, nullable=False, default=True),
        sa.Column("shared", sa.Boolean, nullable=False, default=False),
        sa.Column("external", sa.Boolean, nullable=False, default=False),
        sa.Column("mtu", sa.Integer, nullable=False, default=1500),
        sa.Column("network_type", sa.String(32), nullable=False, default="flat"),
    ),
)
subnets_table = sa.Table(
    "openkeel_net_subnets",
    metadata,
    *_common(
        sa.Column("network_id", sa.String(36), nullable=False, index=True),
        sa.Column("cidr", sa.String(64), nullable=False),
        sa.Column("ip_version", sa.Integer, nullable=False),
        sa.Column("gateway_ip", sa.String(64)),
        sa.Column("enable_dhcp", sa.Boolean, nullable=False, default=True),
        sa.Column("allocation_pools", sa.Text, nullable=False, default="[]"),
        sa.Column("dns_nameservers", sa.Text, nullable=False, default="[]"),
        sa.Column("host_routes", sa.Text, nullable=False, default="[]"),
    ),
)
ports_table = sa.Table(
    "openkeel_net_ports",
    metadata,
    *_common(
        sa.Column("network_id", sa.String(36), nullable=False, index=True),
        sa.Column("mac_address", sa.String(32), nullable=False),
        sa.Column("admin_state_up", sa.Boolean, nullable=False, default=True),
        sa.Column("status", sa.String(16), nullable=False, default="DOWN"),
        sa.Column("device_id", sa.String(255), nullable=False, default="", index=True),
        sa.Column("device_owner", sa.String(255), nullable=False, default=""),
        sa.Column("fixed_ips", sa.Text, nullable=False, default="[]"),
        sa.Column("security_groups", sa.Text, nullable=False, default="[]"),
        sa.Column("port_security_enabled", sa.Boolean, nullable=False, default=True),
        sa.Column("binding_host_id", sa.String(255), nullable=False, default=""),
        sa.Column("binding_profile", sa.Text, nullable=False, default="{}"),
        sa.Column("binding_vnic_type", sa.String(64), nullable=False, default="normal"),
        sa.Column("allowed_address_pairs", sa.Text, nullable=False, default="[]"),
        # OpenKeel's own: compute made the port for a server (deleted with it; a port the user
        # gave is only unbound), and the server's device tag for it.
        sa.Column("created_by_compute", sa.Boolean, nullable=False, default=False),
        sa.Column("device_tag", sa.String(255)),
    ),
    sa.UniqueConstraint("network_id", "mac_address", name="uniq_openkeel_net_ports0mac"),
)
# A port's other bindings (Neutron's binding-extended, decision 0072): INACTIVE ones, e.g. a
# live migration's destination before activation. The ACTIVE binding is the port row's.
port_bindings_table = sa.Table(
    "openkeel_net_port_bindings",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("port_id", sa.String(36), nullable=False, index=True),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("vif_type", sa.String(64), nullable=False),
    sa.Column("binding_vnic_type", sa.String(64), nullable=False, default="normal"),
    sa.Column("binding_profile", sa.Text, nullable=False, default="{}"),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("revision_number", sa.Integer, nullable=False, default=0),
    sa.UniqueConstraint("port_id", "host", name="uniq_openkeel_net_port_bindings0port0host"),
)
ip_allocations_table = sa.Table(
    "openkeel_net_ip_allocations",
    metadata,
    sa.Column("network_id", sa.String(36), primary_key=True),
    sa.Column("ip_address", sa.String(64), primary_key=True),
    sa.Column("subnet_id", sa.String(36), nullable=False, index=True),
    # The port (or floating IP) holding the address.
    sa.Column("holder_id", sa.String(36), nullable=False, index=True),
)
security_groups_table = sa.Table(
    "openkeel_net_security_groups",
    metadata,
    *_common(sa.Column("stateful", sa.Boolean, nullable=False, default=True)),
)
default_security_groups_table = sa.Table(
    "openkeel_net_default_security_groups",
    metadata,
    sa.Column("project_id", sa.String(255), primary_key=True),
    sa.Column("security_group_id", sa.String(36), nullable=False),
)
security_group_rules_table = sa.Table(
    "openkeel_net_security_group_rules",
    metadata,
    *_common(
        sa.Column("security_group_id", sa.String(36), nullable=False, index=True),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("ethertype", sa.String(8), nullable=False),
        sa.Column("protocol", sa.String(40)),
        sa.Column("port_range_min", sa.Integer),
        sa.Column("port_range_max", sa.Integer),
        sa.Column("remote_ip_prefix", sa.String(64)),
        sa.Column("remote_group_id", sa.String(36)),
    ),
)
floating_ips_table = sa.Table(
    "openkeel_net_floating_ips",
    metadata,
    *_common(
        sa.Column("floating_network_id", sa.String(36), nullable=False),
        sa.Column("floating_ip_address", sa.String(64), nullable=False),
        sa.Column("port_id", sa.String(36), index=True),
        sa.Column("fixed_ip_address", sa.String(64)),
        sa.Column("status", sa.String(16), nullable=False, default="DOWN"),
    ),
)
# Routers (Neutron's l3 + ext-gw-mode): the gateway is a port on the external network whose id
# is ``gw_port_id``; interfaces are ports whose device_id is the router's.
routers_table = sa.Table(
    "openkeel_net_routers",
    metadata,
    *_common(
        sa.Column("admin_state_up", sa.Boolean, nullable=False, default=True),
        sa.Column("status", sa.String(16), nullable=False, default="ACTIVE"),
        sa.Column("gw_network_id", sa.String(36)),
        sa.Column("gw_port_id", sa.String(36)),
        sa.Column("enable_snat", sa.Boolean, nullable=False, default=True),
    ),
)

# QoS (decision 0076): policies, their minimum bandwidth / packet rate rules, and which
# network or port a policy is attached to (Neutron's qos_{network,port}_policy_bindings:
# tables of their own, so the networks and ports tables keep their columns).
qos_policies_table = sa.Table(
    "openkeel_net_qos_policies",
    metadata,
    *_common(
        sa.Column("shared", sa.Boolean, nullable=False, default=False),
        sa.Column("is_default", sa.Boolean, nullable=False, default=False),
    ),
)
qos_rules_table = sa.Table(
    "openkeel_net_qos_rules",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("qos_policy_id", sa.String(36), nullable=False, index=True),
    # minimum_bandwidth / minimum_packet_rate
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("direction", sa.String(16), nullable=False),
    sa.Column("min_kbps", sa.Integer),
    sa.Column("min_kpps", sa.Integer),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("revision_number", sa.Integer, nullable=False, default=0),
    sa.UniqueConstraint(
        "qos_policy_id", "type", "direction", name="uniq_openkeel_net_qos_rules0kind"
    ),
)
qos_bindings_table = sa.Table(
    "openkeel_net_qos_bindings",
    metadata,
    # The network's or port's id.
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("qos_policy_id", sa.String(36), nullable=False, index=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("revision_number", sa.Integer, nullable=False, default=0),
)

# Auto-allocated topology (decision 0074): which external network is the deployment's default
# (Neutron's externalnetworks.is_default; a table of its own, so the networks table keeps its
# columns), and each project's topology (Neutron's auto_allocated_topologies, one per project).
default_external_table = sa.Table(
    "openkeel_net_default_external",
    metadata,
    # The network's id.
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("revision_number", sa.Integer, nullable=False, default=0),
)
auto_topologies_table = sa.Table(
    "openkeel_net_auto_topologies",
    metadata,
    # The project's id.
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("network_id", sa.String(36), nullable=False),
    sa.Column("router_id", sa.String(36)),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("revision_number", sa.Integer, nullable=False, default=0),
)


def install_tables(engine: sa.Engine) -> None:
    """Create the network tables that are missing."""
    create_missing(engine, metadata)
