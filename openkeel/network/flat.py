"""The embedded flat network (``[openkeel_network] backend = flat``).

One network (``[openkeel_network]`` network_id, network_name, cidr, gateway, dns_nameservers);
every instance asking for ``auto``, for nothing, or for that network by id or label gets one
VIF with the next free IPv4 address. Allocations are rows of ``openkeel_fixed_ips`` in the API
database (openkeel.network.schema): an insert that hits the unique constraint means another
allocator won that address, so the next one is tried.
"""

from __future__ import annotations

import datetime
import ipaddress
import random
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.db.schema import api as api_tables
from openkeel.network import errors
from openkeel.network.adapter import InstanceNetRef, NetworkAdapter, NetworkInfo, RequestedNetwork
from openkeel.network.schema import ensure_schema, fixed_ips

_T = fixed_ips
_MAPPINGS = api_tables.instance_mappings
_MAX_RACES = 32


class FlatNetwork(NetworkAdapter):
    """Allocates addresses of one IPv4 CIDR to instances."""

    name = "flat"

    def __init__(self, conf: cfg.ConfigOpts, api_db: sa.Engine) -> None:
        opts = conf.openkeel_network
        self.network_id: str = opts.network_id
        self.label: str = opts.network_name
        self.bridge: str = opts.bridge
        self.cidr = ipaddress.IPv4Network(opts.cidr, strict=False)
        hosts = list(self.cidr.hosts())
        self.gateway = ipaddress.IPv4Address(opts.gateway) if opts.gateway else hosts[0]
        self.dns: list[str] = list(opts.dns_nameservers)
        self._pool = [ip for ip in hosts if ip != self.gateway]
        self.db = api_db
        ensure_schema(api_db)

    # --- validation ------------------------------------------------------------------------

    def _wanted(self, requested: Sequence[RequestedNetwork]) -> list[RequestedNetwork]:
        """The requests that need a VIF on this network (none: no network at all)."""
        if any(item.is_none for item in requested):
            return []
        if not requested or any(item.is_auto for item in requested):
            return [RequestedNetwork(network_id=self.network_id)]
        for item in requested:
            if item.port_id:
                raise errors.PortNotFound(item.port_id)
            if item.network_id not in (self.network_id, self.label):
                raise errors.NetworkNotFound(str(item.network_id))
        return list(requested)

    def _check_address(self, address: str) -> ipaddress.IPv4Address:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise errors.InvalidFixedIp(address) from None
        if not isinstance(ip, ipaddress.IPv4Address) or ip not in self._pool:
            raise errors.FixedIpNotInNetwork(address, self.network_id)
        return ip

    def validate_networks(
        self, requested: Sequence[RequestedNetwork], max_count: int, project_id: str | None = None
    ) -> int:
        wanted = self._wanted(requested)
        for item in wanted:
            if item.address is None:
                continue
            self._check_address(item.address)
            if max_count > 1:
                raise errors.InvalidFixedIpAndMaxCountRequest(
                    "max_count cannot be greater than 1 if an fixed_ip is specified."
                )
            owner = self._owner(item.address, project_id)
            if owner is not None:
                raise errors.FixedIpAlreadyInUse(item.address, owner)
        return max_count

    def _owner(self, address: str, project_id: str | None = None) -> str | None:
        """The instance holding ``address`` when the caller may see its port: any for an admin
        (``project_id`` None), else only one of ``project_id``. Neutron lists a non-admin only
        its project's ports, so Nova names no other project's instance (the boot fails later,
        at allocation, with "already in use")."""
        query = sa.select(_T.c.instance_uuid).where(
            _T.c.network_id == self.network_id, _T.c.address == address
        )
        if project_id is not None:
            query = query.join(_MAPPINGS, _MAPPINGS.c.instance_uuid == _T.c.instance_uuid).where(
                _MAPPINGS.c.project_id == project_id
            )
        with self.db.connect() as conn:
            return conn.execute(query).scalar_one_or_none()

    # --- allocation ------------------------------------------------------------------------

    def allocate_for_instance(
        self, instance: InstanceNetRef, requested: Sequence[RequestedNetwork]
    ) -> NetworkInfo:
        existing = self.get_instance_nw_info(instance)
        if existing:
            return existing
        for index, item in enumerate(self._wanted(requested)):
            self._allocate_one(instance, item, index)
        return self.get_instance_nw_info(instance)

    def _allocate_one(self, instance: InstanceNetRef, item: RequestedNetwork, index: int) -> None:
        row = {
            "network_id": self.network_id,
            "instance_uuid": instance.uuid,
            "port_id": str(uuidlib.uuid4()),
            "mac_address": _random_mac(),
            "tag": item.tag,
            "created_at": datetime.datetime.now(datetime.UTC).replace(tzinfo=None),
        }
        if item.address is not None:
            self._check_address(item.address)
            if not self._insert({**row, "address": item.address}):
                # Nova's words when Neutron refuses the address: the holder is not named (the
                # fault is shown to the booting project, which may not own it).
                raise errors.FixedIpAlreadyInUse(item.address)
            return
        for _ in range(_MAX_RACES):
            free = self._first_free()
            if free is None:
                break
            if self._insert({**row, "address": free}):
                return
        raise errors.NoMoreFixedIps(self.network_id)

    def _first_free(self) -> str | None:
        query = sa.select(_T.c.address).where(_T.c.network_id == self.network_id)
        with self.db.connect() as conn:
            used = set(conn.execute(query).scalars())
        for ip in self._pool:
            if str(ip) not in used:
                return str(ip)
        return None

    def _insert(self, row: dict[str, Any]) -> bool:
        try:
            with self.db.begin() as conn:
                conn.execute(sa.insert(_T).values(row))
        except sa.exc.IntegrityError:
            return False
        return True

    def deallocate_for_instance(self, instance: InstanceNetRef) -> None:
        with self.db.begin() as conn:
            conn.execute(sa.delete(_T).where(_T.c.instance_uuid == instance.uuid))

    def get_instance_nw_info(self, instance: InstanceNetRef) -> NetworkInfo:
        query = sa.select(_T).where(_T.c.instance_uuid == instance.uuid).order_by(_T.c.id)
        with self.db.connect() as conn:
            rows = list(conn.execute(query))
        return [self._vif(row, instance) for row in rows]

    # --- Nova's network model ----------------------------------------------------------------

    def _vif(self, row: sa.Row[Any], instance: InstanceNetRef) -> dict[str, Any]:
        return {
            "id": row.port_id,
            "address": row.mac_address,
            "network": {
                "id": self.network_id,
                "bridge": self.bridge,
                "label": self.label,
                "subnets": [self._subnet(row.address)],
                "meta": {"injected": False, "tenant_id": instance.project_id, "mtu": 1500},
            },
            "type": "bridge",
            "details": {},
            "devname": f"tap{row.port_id}"[:14],
            "ovs_interfaceid": None,
            "qbh_params": None,
            "qbg_params": None,
            "active": True,
            "vnic_type": "normal",
            "profile": {},
            "preserve_on_delete": False,
            "delegate_create": False,
            "meta": {},
            "tag": row.tag,
        }

    def _subnet(self, address: str) -> dict[str, Any]:
        return {
            "cidr": str(self.cidr),
            "dns": [_ip(dns, "dns") for dns in self.dns],
            "gateway": _ip(str(self.gateway), "gateway"),
            "ips": [{**_ip(address, "fixed"), "floating_ips": []}],
            "routes": [],
            "version": 4,
            "meta": {"dhcp_server": str(self.gateway)},
        }


def _ip(address: str, kind: str) -> dict[str, Any]:
    return {"address": address, "type": kind, "version": 4, "meta": {}}


def _random_mac() -> str:
    """A locally administered unicast MAC in Nova's fa:16:3e prefix."""
    tail = [random.randint(0x00, 0xFF) for _ in range(3)]
    return "fa:16:3e:" + ":".join(f"{octet:02x}" for octet in tail)
