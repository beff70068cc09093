"""Rows of the embedded network service: networks, subnets, ports, addresses, security groups
and rules, floating IPs (tables in :mod:`openkeel.db.network_tables`).

The network API's use cases (:mod:`openkeel.network.embedded.service`) hold Neutron's rules; this
module only reads and writes rows. A resource is a dict of its columns, JSON columns decoded.
Addresses are claimed one row each in ``openkeel_net_ip_allocations``: a claim that hits the
primary key lost a race and the caller tries the next free address.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.json_columns import decoded, encoded
from openkeel.db.network_tables import (
    auto_topologies_table,
    default_external_table,
    default_security_groups_table,
    floating_ips_table,
    install_tables,
    ip_allocations_table,
    networks_table,
    port_bindings_table,
    ports_table,
    qos_bindings_table,
    qos_policies_table,
    qos_rules_table,
    routers_table,
    security_group_rules_table,
    security_groups_table,
    subnets_table,
)

Row = dict[str, Any]
TABLES: dict[str, sa.Table] = {
    "networks": networks_table,
    "subnets": subnets_table,
    "ports": ports_table,
    "port_bindings": port_bindings_table,
    "security_groups": security_groups_table,
    "security_group_rules": security_group_rules_table,
    "floatingips": floating_ips_table,
    "qos_policies": qos_policies_table,
    "qos_rules": qos_rules_table,
    "qos_bindings": qos_bindings_table,
    "routers": routers_table,
    "default_external": default_external_table,
    "auto_topologies": auto_topologies_table,
}
# Columns stored as JSON text, with their empty value.
_JSON: dict[str, Any] = {
    "allocation_pools": [],
    "dns_nameservers": [],
    "host_routes": [],
    "fixed_ips": [],
    "security_groups": [],
    "binding_profile": {},
    "allowed_address_pairs": [],
}


def now() -> datetime.datetime:
    """Naive UTC, whole seconds (as Neutron shows its time stamps)."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)


def _decoded(row: sa.Row[Any]) -> Row:
    return decoded(row, _JSON)


def _encoded(values: Mapping[str, Any]) -> Row:
    return encoded(values, _JSON)


class NetworkStore:
    """The network rows on the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def install(self) -> None:
        install_tables(self._engine)

    # -- resources --------------------------------------------------------------------------

    def insert(self, kind: str, values: Mapping[str, Any]) -> Row:
        """A new row (stamped now, revision 0); IntegrityError propagates (a MAC taken)."""
        table = TABLES[kind]
        stamp = now()
        row = {"created_at": stamp, "updated_at": stamp, "revision_number": 0, **values}
        with self._engine.begin() as conn:
            conn.execute(table.insert().values(**_encoded(row)))
        found = self.get(kind, str(values["id"]))
        assert found is not None
        return found

    def get(self, kind: str, ident: str) -> Row | None:
        table = TABLES[kind]
        with reader(self._engine).connect() as conn:
            row = conn.execute(table.select().where(table.c.id == ident)).first()
        return None if row is None else _decoded(row)

    def list(self, kind: str, **equal: Any) -> list[Row]:
        """Rows whose columns equal the given values (a list value: any of them)."""
        table = TABLES[kind]
        clauses = []
        for name, value in equal.items():
            if value is None:
                continue
            column = table.c[name]
            clauses.append(
                column.in_(value) if isinstance(value, list | tuple) else column == value
            )
        query = table.select().where(*clauses).order_by(table.c.created_at, table.c.id)
        with reader(self._engine).connect() as conn:
            return [_decoded(row) for row in conn.execute(query)]

    def update(self, kind: str, ident: str, values: Mapping[str, Any]) -> Row | None:
        """Set columns, bump the revision; None when the row is gone."""
        table = TABLES[kind]
        query = (
            table.update()
            .where(table.c.id == ident)
            .values(**_encoded(values), updated_at=now(),
                    revision_number=table.c.revision_number + 1)
        )  # fmt: skip
        with self._engine.begin() as conn:
            if not conn.execute(query).rowcount:
                return None
        return self.get(kind, ident)

    def delete(self, kind: str, ident: str) -> bool:
        table = TABLES[kind]
        with self._engine.begin() as conn:
            gone = bool(conn.execute(table.delete().where(table.c.id == ident)).rowcount)
            if kind == "ports":
                bindings = port_bindings_table
                conn.execute(bindings.delete().where(bindings.c.port_id == ident))
            if kind == "security_groups":
                rules = security_group_rules_table
                conn.execute(rules.delete().where(rules.c.security_group_id == ident))
                defaults = default_security_groups_table
                conn.execute(defaults.delete().where(defaults.c.security_group_id == ident))
        return gone

    # -- addresses --------------------------------------------------------------------------

    def allocated(self, network_id: str) -> set[str]:
        t = ip_allocations_table
        with reader(self._engine).connect() as conn:
            rows = conn.execute(sa.select(t.c.ip_address).where(t.c.network_id == network_id))
            return set(rows.scalars())

    def claim(self, network_id: str, subnet_id: str, address: str, holder_id: str) -> bool:
        """Take ``address`` for ``holder_id``; False when someone holds it already."""
        values = {"network_id": network_id, "ip_address": address, "subnet_id": subnet_id,
                  "holder_id": holder_id}  # fmt: skip
        try:
            with self._engine.begin() as conn:
                conn.execute(ip_allocations_table.insert().values(**values))
        except sa.exc.IntegrityError:
            return False
        return True

    def claim_first(
        self, network_id: str, subnet_id: str, candidates: Iterable[str], holder_id: str
    ) -> str | None:
        """The first of ``candidates`` this holder could take (None: all taken)."""
        for address in candidates:
            if self.claim(network_id, subnet_id, address, holder_id):
                return address
        return None

    def release(self, holder_id: str, addresses: Iterable[str] | None = None) -> None:
        """Free the holder's addresses (all, or those given)."""
        t = ip_allocations_table
        query = t.delete().where(t.c.holder_id == holder_id)
        if addresses is not None:
            query = query.where(t.c.ip_address.in_(list(addresses)))
        with self._engine.begin() as conn:
            conn.execute(query)

    def subnet_in_use(self, subnet_id: str) -> bool:
        t = ip_allocations_table
        with reader(self._engine).connect() as conn:
            return (
                conn.execute(sa.select(t.c.ip_address).where(t.c.subnet_id == subnet_id)).first()
                is not None
            )

    # -- default security groups -------------------------------------------------------------

    def default_security_group(self, project_id: str) -> str | None:
        t = default_security_groups_table
        with reader(self._engine).connect() as conn:
            query = sa.select(t.c.security_group_id).where(t.c.project_id == project_id)
            return conn.execute(query).scalar_one_or_none()

    def set_default_security_group(self, project_id: str, group_id: str) -> bool:
        """Record ``group_id`` as the project's default; False when another one won."""
        try:
            with self._engine.begin() as conn:
                conn.execute(default_security_groups_table.insert().values(
                    project_id=project_id, security_group_id=group_id))  # fmt: skip
        except sa.exc.IntegrityError:
            return False
        return True
