"""What a volume API handler receives (VolumeRequest) and returns (Reply); the microversion
of a request (``OpenStack-API-Version: volume 3.x``) and Cinder's body checks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from openkeel.volume.embedded.faults import BadRequest, NotAcceptable
from openkeel.volume.embedded.service import Caller, VolumeService

PREFIX = "/volume"
MIN_VERSION = (3, 0)
MAX_VERSION = (3, 70)
Version = tuple[int, int]


def text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def negotiate(headers: dict[str, str]) -> Version:
    """The request's microversion: 3.0 without the header, the newest for ``latest``; 400 for
    a malformed one, 406 outside the served range (Cinder's answers)."""
    wanted = None
    for item in headers.get("openstack-api-version", "").split(","):
        service, _, value = item.strip().partition(" ")
        if service.lower() == "volume":
            wanted = value.strip()
    if not wanted:
        return MIN_VERSION
    if wanted == "latest":
        return MAX_VERSION
    found = re.fullmatch(r"([1-9]\d*)\.(0|[1-9]\d*)", wanted)
    if found is None:
        raise BadRequest(f"API Version String {wanted} is of invalid format. Must be of format "
                         "MajorNum.MinorNum.")  # fmt: skip
    version = (int(found[1]), int(found[2]))
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(f"Version {wanted} is not supported by the API. Minimum is "
                            f"{text(MIN_VERSION)} and maximum is {text(MAX_VERSION)}.")  # fmt: skip
    return version


@dataclass
class VolumeRequest:
    method: str
    params: dict[str, str]
    query: list[tuple[str, str]]
    headers: dict[str, str]
    service: VolumeService
    root: str
    version: Version = MIN_VERSION
    caller: Caller = field(default_factory=lambda: Caller(None))
    body: bytes = b""

    @property
    def base(self) -> str:
        return self.root + PREFIX

    def at_least(self, major: int, minor: int) -> bool:
        return self.version >= (major, minor)

    def document(self) -> dict[str, Any]:
        try:
            document = orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Malformed request body") from exc
        if not isinstance(document, dict):
            raise BadRequest("The server could not comply with the request since it is either "
                             "malformed or otherwise incorrect.")  # fmt: skip
        return document

    def element(self, key: str) -> dict[str, Any]:
        """``body[key]``, a dictionary (Cinder's 400 otherwise)."""
        document = self.document()
        if key not in document:
            raise BadRequest(f"Missing required element '{key}' in request body.")
        ref = document[key]
        if not isinstance(ref, dict):
            raise BadRequest(f"Invalid input for field/attribute {key}. Value: {ref}. "
                             f"{ref!r} is not of type 'object'")  # fmt: skip
        return ref

    def value(self, name: str) -> str | None:
        found = [v for k, v in self.query if k == name]
        return found[-1] if found else None

    def flag(self, name: str) -> bool:
        return (self.value(name) or "").lower() in ("1", "true", "yes", "on")


@dataclass
class Reply:
    body: Any = None
    status: int = 200


def integer(name: str, value: Any, low: int = 1) -> int:
    """A whole number (or its text) not below ``low`` (Cinder's 400 otherwise)."""
    try:
        number = int(value) if not isinstance(value, bool | float) else None
    except (TypeError, ValueError):
        number = None
    if number is None or number < low:
        raise BadRequest(f"Invalid input for field/attribute {name}. Value: {value}. "
                         f"{value!r} is not a valid integer not less than {low}")  # fmt: skip
    return number


def optional_text(ref: dict[str, Any], name: str, limit: int = 255) -> None:
    value = ref.get(name)
    if value is not None and (not isinstance(value, str) or len(value) > limit):
        raise BadRequest(f"Invalid input for field/attribute {name}. Value: {value}. "
                         f"{value!r} is not a valid string of at most {limit} characters")  # fmt: skip


def metadata(ref: dict[str, Any], name: str = "metadata") -> None:
    value = ref.get(name)
    if value is None:
        return
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= 255 and len(v) <= 255
        for k, v in value.items()
    ):
        raise BadRequest(f"Invalid input for field/attribute {name}. Value: {value}. "
                         "Keys and values must be strings of at most 255 characters")  # fmt: skip


def page(req: VolumeRequest, items: list[dict[str, Any]], collection: str) -> dict[str, Any]:
    """``items`` sorted (``sort=key:dir``, newest first by default), after ``marker``, at
    most ``limit`` with a next link."""
    sort = req.value("sort") or req.value("sort_key") or "created_at"
    key, _, direction = sort.split(",")[0].partition(":")
    direction = direction or req.value("sort_dir") or "desc"
    items.sort(key=lambda i: (str(i.get(key) or ""), i["created_at"]),
               reverse=direction == "desc")  # fmt: skip
    body: dict[str, Any] = {}
    marker = req.value("marker")
    if marker:
        ids = [i["id"] for i in items]
        if marker not in ids:
            raise BadRequest(f"Marker {marker} could not be found.")
        items = items[ids.index(marker) + 1 :]
    limit = req.value("limit")
    if limit is not None:
        size = integer("limit", limit, 0)
        if len(items) > size:
            items = items[:size]
            if items:
                href = f"{req.base}/v3/{collection}?limit={size}&marker={items[-1]['id']}"
                body[f"{collection}_links"] = [{"rel": "next", "href": href}]
    body[collection] = items
    return body
