"""Volume types and their extra specs, with Cinder 29's rules (decision 0075).

Writes are an administrator's (Cinder's ``volume_extension:type_*`` policies); a project sees
the public types, an administrator every type (type access lists are not built: a private
type is an administrator's). A type is found by id or by name. The default type
(``__DEFAULT__``, made with the tables) cannot be deleted; a type volumes use cannot be
deleted, nor its extra specs changed. A volume is ``multiattach`` when its type's extra spec
``multiattach`` is exactly ``<is> True`` (Cinder's test), fixed when the volume is made.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from openkeel.db.volume_store import DEFAULT_TYPE, Row, VolumeStore
from openkeel.volume.embedded.faults import BadRequest, Conflict, NotFound, policy

__all__ = ["DEFAULT_TYPE", "VolumeTypes", "is_multiattach"]

MULTIATTACH_ON = "<is> True"


def is_multiattach(vtype: Row) -> bool:
    return bool(vtype["extra_specs"].get("multiattach") == MULTIATTACH_ON)


def type_not_found(ident: str) -> NotFound:
    return NotFound(f"Volume type {ident} could not be found.")


class VolumeTypes:
    """The types on the volume store; ``admin`` says whether the caller is an administrator."""

    def __init__(self, store: VolumeStore) -> None:
        self.store = store

    def visible(self, admin: bool) -> list[Row]:
        return [t for t in self.store.list("types") if admin or t["is_public"]]

    def default(self) -> Row:
        found = self.store.get("types", DEFAULT_TYPE["id"])
        if found is None:
            raise type_not_found("default")
        return found

    def get(self, ident: str, admin: bool) -> Row:
        """By id (or ``default``); Cinder's 404 for an unknown or private one."""
        found = self.default() if ident == "default" else self.store.get("types", ident)
        if found is None or not (admin or found["is_public"]):
            raise type_not_found(ident)
        return found

    def for_volume(self, wanted: str | None, admin: bool) -> Row:
        """The type a new volume gets: named (by name or id) or the default."""
        if wanted is None:
            return self.default()
        for row in self.visible(admin):
            if wanted in (row["id"], row["name"]):
                return row
        raise NotFound(f"Volume type with name {wanted} could not be found.")

    def name_of(self, type_id: str) -> str | None:
        found = self.store.get("types", type_id)
        return None if found is None else str(found["name"])

    def _admin(self, admin: bool, action: str) -> None:
        if not admin:
            raise policy(f"volume_extension:{action}")

    def _unique(self, name: str, ident: str | None = None) -> None:
        if any(t["name"] == name and t["id"] != ident for t in self.store.list("types")):
            raise Conflict(f"Volume Type {name} already exists.")

    def create(self, admin: bool, ref: Mapping[str, Any]) -> Row:
        self._admin(admin, "type_create")
        name = str(ref["name"]).strip()
        if not name:
            raise BadRequest("Volume type name can not be empty.")
        self._unique(name)
        values = {"id": str(uuid.uuid4()), "name": name, "description": ref.get("description"),
                  "is_public": bool(ref.get("is_public", True)),
                  "extra_specs": dict(ref.get("extra_specs") or {})}  # fmt: skip
        return self.store.insert("types", values)

    def update(self, admin: bool, ident: str, ref: Mapping[str, Any]) -> Row:
        self._admin(admin, "type_update")
        row = self.get(ident, True)
        name = ref.get("name")
        if name is not None and not name.strip():
            raise BadRequest("Volume type name can not be empty.")
        if name is None and ref.get("description") is None and ref.get("is_public") is None:
            raise BadRequest("Specify volume type name, description, is_public or a "
                             "combination thereof.")  # fmt: skip
        values: dict[str, Any] = {}
        if name is not None:
            self._unique(name.strip(), row["id"])
            values["name"] = name.strip()
        if ref.get("description") is not None:
            values["description"] = ref["description"]
        if ref.get("is_public") is not None:
            values["is_public"] = bool(ref["is_public"])
        found = self.store.update("types", row["id"], values)
        if found is None:
            raise type_not_found(ident)
        return found

    def in_use(self, type_id: str) -> bool:
        return bool(self.store.list("volumes", volume_type_id=type_id))

    def delete(self, admin: bool, ident: str) -> None:
        self._admin(admin, "type_delete")
        row = self.get(ident, True)
        if row["id"] == DEFAULT_TYPE["id"]:
            raise BadRequest(f"The volume type {row['id']} is a default volume type and cannot "
                             "be deleted.")  # fmt: skip
        if self.in_use(row["id"]):
            raise BadRequest("Target volume type is still in use.")
        self.store.delete("types", row["id"])

    # -- extra specs ------------------------------------------------------------------------

    def specs(self, admin: bool, ident: str) -> dict[str, str]:
        return dict(self.get(ident, admin)["extra_specs"])

    def spec(self, admin: bool, ident: str, key: str) -> str:
        specs = self.specs(admin, ident)
        if key not in specs:
            raise NotFound(f"Volume Type {ident} has no extra specs with key {key}.")
        return specs[key]

    def set_specs(self, admin: bool, ident: str, specs: Mapping[str, str], action: str) -> None:
        """Add or replace specs; refused while volumes use the type (Cinder's), and for
        ``cacheable`` with ``multiattach``."""
        self._admin(admin, f"types_extra_specs:{action}")
        row = self.get(ident, True)
        if self.in_use(row["id"]):
            raise BadRequest("Volume Type is currently in use.")
        merged = {**row["extra_specs"], **specs}
        if (
            merged.get("cacheable") == MULTIATTACH_ON
            and merged.get("multiattach") == MULTIATTACH_ON
        ):
            raise BadRequest("cacheable cannot be set with multiattach.")
        self.store.update("types", row["id"], {"extra_specs": merged})

    def delete_spec(self, admin: bool, ident: str, key: str) -> None:
        row = self.get(ident, admin)
        self._admin(admin, "types_extra_specs:delete")
        if self.in_use(row["id"]):
            raise BadRequest("Volume Type is currently in use.")
        if key not in row["extra_specs"]:
            raise NotFound(f"Volume Type {ident} has no extra specs with key {key}.")
        specs = {k: v for k, v in row["extra_specs"].items() if k != key}
        self.store.update("types", row["id"], {"extra_specs": specs})
