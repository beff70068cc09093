"""Servers as the metadata service sees them: read from the cell databases through the
repositories (instance mapping -> cell -> instance; or the info caches for a fixed IP), and
the password a guest posts written back to system metadata.

Called by :mod:`openkeel.metadata.app`; blocking (run on its workers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.repositories import instance_addresses, instance_mappings, instances
from openkeel.db.repositories.keypairs import KeyPairRepository
from openkeel.domain.guest_metadata import password
from openkeel.domain.guest_metadata.record import GuestRecord, from_instance
from openkeel.domain.instances import Instance, InstanceNotFound, InstanceUpdate


@dataclass(frozen=True)
class Located:
    """A server's record and the cell it lives in."""

    record: GuestRecord
    cell_uuid: str


class GuestRecords:
    """Reads servers for the metadata service.

    ``local_cell`` (``[api] local_metadata_per_cell``): only that cell is searched, without
    the API database's instance mappings.
    """

    def __init__(
        self,
        api_db: sa.Engine,
        cell_dbs: Mapping[str, sa.Engine],
        dhcp_domain: str = "",
        local_cell: str | None = None,
    ) -> None:
        self._api_db = api_db
        self._cells = dict(cell_dbs)
        self._dhcp_domain = dhcp_domain
        self._local_cell = local_cell
        self._keypairs = KeyPairRepository(api_db)

    def _cell_of(self, uuid: str) -> str | None:
        if self._local_cell is not None:
            return self._local_cell
        with reader(self._api_db).connect() as conn:
            mapping = instance_mappings.find(conn, uuid)
        return mapping.cell_uuid if mapping is not None else None

    def find(self, uuid: str) -> Located | None:
        """The live server ``uuid``, or None."""
        cell = self._cell_of(uuid)
        if cell is None or cell not in self._cells:
            return None
        try:
            with reader(self._cells[cell]).connect() as conn:
                instance = instances.get(conn, uuid)
        except InstanceNotFound:
            return None
        return Located(from_instance(instance, self._key_type(instance), self._dhcp_domain), cell)

    def _key_type(self, instance: Instance) -> str:
        if not instance.key_name:
            return "ssh"
        stored = self._keypairs.get(instance.user_id, instance.key_name)
        return (
            stored.type if stored is not None and stored.public_key == instance.key_data else "ssh"
        )

    def uuid_with_address(self, address: str) -> str | None:
        """The live server with fixed IP ``address`` (the first found), or None."""
        cells = [self._local_cell] if self._local_cell is not None else list(self._cells)
        for cell in cells:
            with reader(self._cells[cell]).connect() as conn:
                found = instance_addresses.uuids_with_address(conn, address)
            if found:
                return found[0]
        return None

    def save_password(self, located: Located, encrypted: str) -> None:
        """Store the password the guest posted (InstanceNotFound when it is gone)."""
        with self._cells[located.cell_uuid].begin() as conn:
            current = instances.get(conn, located.record.uuid)
            sysmeta = {**current.system_metadata, **password.chunked(encrypted)}
            instances.update(conn, current.uuid, InstanceUpdate(system_metadata=sysmeta))
