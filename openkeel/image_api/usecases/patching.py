"""Glance's ``application/openstack-images-v2.1-json-patch``: parse and apply to one image
(the older ``v2.0-json-patch`` body, JSON patch draft 4, is turned into it by :func:`from_draft4`).

Called by :func:`openkeel.image_api.usecases.images.update`. The subset of RFC 6902 Glance takes:
``add``, ``replace`` and ``remove`` of one top-level attribute (``/name``, ``/my_property``).
Adding a present property replaces it; replacing or removing an absent custom property is a 409;
removing a base attribute a 403; anything malformed a 400.
"""

from __future__ import annotations

import copy
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from openkeel.image_api.faults import BadRequest, Conflict, Forbidden

OPERATIONS = ("add", "replace", "remove")


@dataclass(frozen=True)
class Change:
    """One parsed operation."""

    op: str
    key: str
    value: Any = None


@dataclass
class Patched:
    """The document after the patch and the operations applied."""

    document: dict[str, Any]
    touched: list[Change] = field(default_factory=list)


def _key(path: Any) -> str:
    if not isinstance(path, str) or not path.startswith("/") or len(path) < 2:
        raise BadRequest(f"Json path should start with a '/' and name an attribute: {path!r}")
    parts = path[1:].split("/")
    if len(parts) != 1:
        if parts[0] in ("locations", "tags"):
            raise Forbidden(f"Attribute '{parts[0]}' can only be changed as a whole.")
        raise BadRequest(f"Nested paths are not allowed: {path!r}")
    # RFC 6901 escapes.
    return parts[0].replace("~1", "/").replace("~0", "~")


def parse(ops: Any) -> list[Change]:
    """The operations of a patch body (400 when it is not a list of operation objects)."""
    if not isinstance(ops, list):
        raise BadRequest("Request body must be a JSON array of operation objects.")
    changes = []
    for raw in ops:
        if not isinstance(raw, dict):
            raise BadRequest("Operations must be JSON objects.")
        op = raw.get("op")
        if op not in OPERATIONS:
            raise BadRequest(
                'Operation objects must contain exactly one member named "op" with one of '
                'the values "add", "remove" or "replace".'
            )
        if op != "remove" and "value" not in raw:
            raise BadRequest(f'Operation "{op}" requires a member named "value".')
        changes.append(Change(op, _key(raw.get("path")), raw.get("value")))
    return changes


def from_draft4(ops: Any) -> Any:
    """A ``v2.0-json-patch`` body (draft 4: ``{"add": "/name", "value": ...}``) as a v2.1 one
    (``{"op": "add", "path": "/name", ...}``), with Glance's 400 for an object naming no
    operation or several."""
    if not isinstance(ops, list):
        return ops  # parse() refuses it
    out = []
    for raw in ops:
        if not isinstance(raw, dict):
            out.append(raw)
            continue
        named = [op for op in OPERATIONS if op in raw]
        if len(named) != 1:
            raise BadRequest(
                "Operation objects must contain "
                + ("exactly" if not named else "only")
                + ' one member named "add", "remove", or "replace".'
            )
        rest = {k: v for k, v in raw.items() if k != named[0]}
        out.append({**rest, "op": named[0], "path": raw[named[0]]})
    return out


def apply_changes(document: dict[str, Any], ops: Any, base: Set[str]) -> Patched:
    """``document`` with the patch applied; ``base`` attributes are never absent."""
    result = Patched(copy.deepcopy(document))
    for change in parse(ops):
        present = change.key in result.document or change.key in base
        if change.op == "remove":
            if change.key in base:
                raise Forbidden(
                    f"Attribute '{change.key}' is a base attribute: it cannot be removed."
                )
            if not present:
                raise Conflict(f"Property {change.key} does not exist.")
            del result.document[change.key]
        elif change.op == "replace" and not present:
            raise Conflict(f"Property {change.key} does not exist.")
        else:
            result.document[change.key] = change.value
        result.touched.append(change)
    return result
