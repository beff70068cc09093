"""The image and member JSON schemas: served at ``/v2/schemas/*`` and checked on create/update.

Glance publishes its schemas so clients (python-glanceclient) can validate and show help; it also
validates every created or patched image against the image schema (400 on a mismatch). Which
attributes are read-only or reserved decides Glance's 403s on create and patch.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema

CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed")
DISK_FORMATS = (
    "ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop",
)  # fmt: skip
VISIBILITIES = ("public", "private", "shared", "community")
STATUSES = (
    "queued", "saving", "active", "killed", "deleted", "uploading", "importing",
    "pending_delete", "deactivated",
)  # fmt: skip
MEMBER_STATUSES = ("pending", "accepted", "rejected")

# Set by the service only (403 "is read-only" when a client sends them).
READ_ONLY = frozenset(
    {
        "created_at", "updated_at", "status", "checksum", "os_hash_algo", "os_hash_value",
        "size", "virtual_size", "direct_url", "self", "file", "schema", "stores",
    }
)  # fmt: skip
# Never settable through the API (403 "is reserved").
RESERVED = frozenset({"deleted", "deleted_at", "location", "locations"})
RESERVED_PREFIX = "os_glance"
# Attributes of every image: they are replaced, never added or removed as properties.
BASE = frozenset(
    {
        "id", "name", "visibility", "protected", "os_hidden", "owner", "container_format",
        "disk_format", "min_ram", "min_disk", "tags",
    }
) | READ_ONLY  # fmt: skip


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **extra}


def _time(description: str) -> dict[str, Any]:
    return {"type": "string", "readOnly": True, "description": description}


IMAGE_SCHEMA: dict[str, Any] = {
    "name": "image",
    "additionalProperties": {"type": "string"},
    "properties": {
        "id": {
            "type": "string",
            "pattern": "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
            "-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$",
            "description": "An identifier for the image",
        },
        "name": _nullable("string", maxLength=255, description="Descriptive name for the image"),
        "status": {"type": "string", "readOnly": True, "enum": list(STATUSES)},
        "visibility": {"type": "string", "enum": list(VISIBILITIES)},
        "protected": {"type": "boolean", "description": "If true, image will not be deletable."},
        "os_hidden": {"type": "boolean", "description": "If true, image is left out of lists."},
        "checksum": _nullable("string", readOnly=True, maxLength=32),
        "os_hash_algo": _nullable("string", readOnly=True, maxLength=64),
        "os_hash_value": _nullable("string", readOnly=True, maxLength=128),
        "owner": _nullable("string", maxLength=255, description="Owner of the image"),
        "size": _nullable("integer", readOnly=True),
        "virtual_size": _nullable("integer", readOnly=True),
        "container_format": {"type": ["null", "string"], "enum": [None, *CONTAINER_FORMATS]},
        "disk_format": {"type": ["null", "string"], "enum": [None, *DISK_FORMATS]},
        "created_at": _time("Date and time of image registration"),
        "updated_at": _time("Date and time of the last image modification"),
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 255}},
        "direct_url": {"type": "string", "readOnly": True},
        "min_ram": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
        "min_disk": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
        "self": {"type": "string", "readOnly": True},
        "file": {"type": "string", "readOnly": True},
        "stores": {"type": "string", "readOnly": True},
        "schema": {"type": "string", "readOnly": True},
    },
    "links": [
        {"rel": "self", "href": "{self}"},
        {"rel": "enclosure", "href": "{file}"},
        {"rel": "describedby", "href": "{schema}"},
    ],
}

MEMBER_SCHEMA: dict[str, Any] = {
    "name": "member",
    "properties": {
        "created_at": _time("Date and time of image member creation"),
        "image_id": {"type": "string", "description": "An identifier for the image"},
        "member_id": {"type": "string", "description": "An identifier for the image member"},
        "status": {"type": "string", "enum": list(MEMBER_STATUSES)},
        "updated_at": _time("Date and time of last modification of image member"),
        "schema": {"type": "string", "readOnly": True},
    },
}


def collection_schema(name: str, item: dict[str, Any], links: bool) -> dict[str, Any]:
    """The schema of a list document (``images``, ``members``)."""
    schema: dict[str, Any] = {
        "name": name,
        "properties": {
            name: {"type": "array", "items": copy.deepcopy(item)},
            "schema": {"type": "string"},
        },
    }
    if links:
        schema["properties"].update({"first": {"type": "string"}, "next": {"type": "string"}})
        schema["links"] = [
            {"rel": "first", "href": "{first}"},
            {"rel": "next", "href": "{next}"},
            {"rel": "describedby", "href": "{schema}"},
        ]
    return schema


_VALIDATOR = jsonschema.Draft4Validator(IMAGE_SCHEMA)


def schema_error(document: dict[str, Any]) -> str | None:
    """Why ``document`` breaks the image schema, or None."""
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(document))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"Provided object does not match schema 'image': {error.message}" + (
        f" (at '{where}')" if where else ""
    )
