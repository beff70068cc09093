"""What a network API handler receives (NetworkRequest) and returns (Reply); Neutron's body
and attribute checks."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from openkeel.network.embedded.faults import BadRequest
from openkeel.network.embedded.service import Caller, NetworkService

PREFIX = "/networking"
_CONTROL = {"fields", "limit", "marker", "sort_key", "sort_dir", "page_reverse"}


@dataclass
class NetworkRequest:
    method: str
    params: dict[str, str]
    query: list[tuple[str, str]]
    headers: dict[str, str]
    service: NetworkService
    root: str
    caller: Caller = field(default_factory=lambda: Caller(None, False))
    body: bytes = b""

    @property
    def base(self) -> str:
        return self.root + PREFIX

    def resource(
        self, key: str, attrs: Mapping[str, Check], required: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """``body[key]`` with every attribute known and of the right type (Neutron's 400s)."""
        try:
            document = orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Malformed request body") from exc
        if not isinstance(document, dict) or key not in document:
            raise BadRequest(f"Unable to find '{key}' in request body")
        ref = document[key]
        if not isinstance(ref, dict):
            raise BadRequest(f"Invalid input for {key}. Reason: '{ref}' is not a dictionary.")
        unknown = sorted(set(ref) - set(attrs))
        if unknown:
            raise BadRequest("Unrecognized attribute(s) '" + ", ".join(unknown) + "'")
        for name in required:
            if name not in ref:
                raise BadRequest(f"Failed to parse request. Required attribute '{name}' not "
                                 "specified")  # fmt: skip
        out = {}
        for name, value in ref.items():
            out[name] = attrs[name](name, value)
        return out

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object (an action's body, e.g. a router interface's)."""
        try:
            document = orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Malformed request body") from exc
        if not isinstance(document, dict):
            raise BadRequest("Malformed request body")
        return document

    def filters(self) -> list[tuple[str, str]]:
        return [(k, v) for k, v in self.query if k not in _CONTROL]

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.query if k == name]


@dataclass
class Reply:
    body: Any = None
    status: int = 200


Check = Callable[[str, Any], Any]


def _invalid(name: str, reason: str) -> BadRequest:
    return BadRequest(f"Invalid input for {name}. Reason: {reason}.")


def string(limit: int = 255, nullable: bool = False) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise _invalid(name, f"'{value}' is not a valid string")
        if len(value) > limit:
            raise _invalid(name, f"'{value}' exceeds maximum length of {limit}")
        return value

    return check


def boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    raise _invalid(name, f"'{value}' is not a valid boolean value")


def uuid_value(nullable: bool = False) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and nullable:
            return None
        try:
            return str(uuid.UUID(str(value))) if isinstance(value, str) else _fail()
        except ValueError:
            raise _invalid(name, f"'{value}' is not a valid UUID") from None

    def _fail() -> str:
        raise ValueError

    return check


def integer(low: int | None = None, high: int | None = None, nullable: bool = True) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None and nullable:
            return None
        try:
            number = int(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if (
            number is None
            or (low is not None and number < low)
            or (high is not None and number > high)
        ):
            raise _invalid(name, f"'{value}' is not a valid integer")
        return number

    return check


def listing(item: Check | None = None) -> Check:
    def check(name: str, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, list):
            raise _invalid(name, f"'{value}' is not a list")
        return [item(name, v) for v in value] if item else value

    return check


def mapping(name: str, value: Any) -> Any:
    if not isinstance(value, dict):
        raise _invalid(name, f"'{value}' is not a dictionary")
    return value


def fixed_ip(name: str, value: Any) -> Any:
    if not isinstance(value, dict) or set(value) - {"subnet_id", "ip_address"}:
        raise _invalid(name, f"'{value}' is not a valid fixed IP")
    if "subnet_id" in value:
        uuid_value()(name, value["subnet_id"])
    if "ip_address" in value:
        string(64)(name, value["ip_address"])
    return value


def anything(name: str, value: Any) -> Any:
    return value
