"""JSON-schema validation of request bodies and query strings with Nova's 400 messages.

Schemas are declared per route as :class:`Versioned` tables (each entry names the microversion
that introduced it). Validation follows Nova's rules: JSON Schema 2020-12, ``minimum`` and
``maximum`` also apply to numeric strings, the first error wins, and the message names the
offending field (body: the deepest key; query: the parameter).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import unicodedata
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jsonschema
from jsonschema import validators as js_validators

from openkeel.api.microversion import LEGACY_V2, MAX_VERSION, APIVersion, v
from openkeel.domain.errors import ValidationFailed

_FORMATS = jsonschema.FormatChecker(formats=())


class InvalidName(ValueError):
    """Raised by the name format checkers; its text becomes the whole 400 message."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"An invalid 'name' value was provided. The name must be: {reason}")


def _printable(char: str, allow_space: bool = True, exclude: str = "") -> bool:
    # Nova's name rule: letters, marks, numbers, punctuation, symbols and (optionally)
    # horizontal spaces of the Basic Multilingual Plane, minus any excluded characters.
    if char in exclude or ord(char) >= 0xFFFF:
        return False
    category = unicodedata.category(char)
    if category.startswith("C") or (category.startswith("Z") and category != "Zs"):
        return False
    return allow_space or category != "Zs"


def _strict_name(value: str, exclude: str = "") -> bool:
    if not all(_printable(c, exclude=exclude) for c in value):
        return False
    if not value:
        return True
    return _printable(value[0], False, exclude) and _printable(value[-1], False, exclude)


def _spaced_name(value: str, exclude: str = "") -> bool:
    return (
        bool(value)
        and all(_printable(c, exclude=exclude) for c in value)
        and any(_printable(c, False, exclude) for c in value)
    )


_NAME_REASON = "printable characters. Can not start or end with whitespace."
_SPACED_REASON = "printable characters with at least one non space character"
_AZ_REASON = "printable characters except :.Can not start or end with whitespace."
_AZ_SPACED_REASON = "printable characters except :, with at least one non space character"


def _name_checker(check: Any, reason: str) -> Any:
    def checker(instance: object) -> bool:
        if isinstance(instance, str) and check(instance):
            return True
        raise InvalidName(reason)

    return checker


_FORMATS.checks("name", InvalidName)(_name_checker(_strict_name, _NAME_REASON))
_FORMATS.checks("name_with_leading_trailing_spaces", InvalidName)(
    _name_checker(_spaced_name, _SPACED_REASON)
)
_FORMATS.checks("az_name", InvalidName)(_name_checker(lambda s: _strict_name(s, ":"), _AZ_REASON))
_FORMATS.checks("az_name_with_leading_trailing_spaces", InvalidName)(
    _name_checker(lambda s: _spaced_name(s, ":"), _AZ_SPACED_REASON)
)


def _is_uuid(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        return str(uuid.UUID(instance)).replace("-", "") == instance.replace("-", "").lower()
    except ValueError:
        return False


def _is_regex(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    if not instance:
        return False
    try:
        re.compile(instance)
    except re.error:
        return False
    return True


def _is_datetime(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        datetime.fromisoformat(instance.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _is_base64(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        base64.b64decode(instance.encode("utf-8"), validate=False)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_cidr(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    if "/" not in instance or re.search(r"\s", instance):
        return False
    try:
        ipaddress.ip_network(instance, strict=False)
    except ValueError:
        return False
    return True


def _is_ipv4(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        ipaddress.IPv4Address(instance)
    except ValueError:
        return False
    return True


def _is_ipv6(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        address = ipaddress.IPv6Address(instance)
    except ValueError:
        return False
    return not address.scope_id  # jsonschema's (Nova's) checker refuses "fe80::1%eth0"


for _format, _checker in (
    ("uuid", _is_uuid),
    ("regex", _is_regex),
    ("date-time", _is_datetime),
    ("base64", _is_base64),
    ("cidr", _is_cidr),
    ("ipv4", _is_ipv4),
    ("ipv6", _is_ipv6),
):
    _FORMATS.checks(_format)(_checker)


def _number_from(instance: object) -> float | int | None:
    if isinstance(instance, bool):
        return int(instance)
    if isinstance(instance, int | float):
        return instance
    if isinstance(instance, str):
        for kind in (int, float):
            try:
                return kind(instance)
            except ValueError:
                continue
    return None


_BASE = js_validators.Draft202012Validator


def _minimum(validator: Any, minimum: Any, instance: Any, schema: Any) -> Iterator[Any]:
    number = _number_from(instance)
    if number is not None:
        yield from _BASE.VALIDATORS["minimum"](validator, minimum, number, schema)


def _maximum(validator: Any, maximum: Any, instance: Any, schema: Any) -> Iterator[Any]:
    number = _number_from(instance)
    if number is not None:
        yield from _BASE.VALIDATORS["maximum"](validator, maximum, number, schema)


_NovaValidator = js_validators.extend(_BASE, {"minimum": _minimum, "maximum": _maximum})


class Schema:
    """A JSON schema compiled once; hashable by identity so validators are cached."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator = _NovaValidator(schema, format_checker=_FORMATS)
        # The verdict on an empty query (most requests have none): "" = valid, None = unknown.
        self._empty_query_error: str | None = None

    def errors(self, instance: Any) -> Iterator[jsonschema.ValidationError]:
        """Every validation error (first one is the one Nova reports)."""
        yield from self._validator.iter_errors(instance)

    def validate_body(self, body: Any, relaxed: bool = False) -> None:
        """Raise ValidationFailed with Nova's body message on the first error.

        ``relaxed`` (the legacy /v2 mount) ignores unknown properties, as Nova's v2 shim does.
        """
        for error in self.errors(body):
            if relaxed and error.validator == "additionalProperties":
                continue
            raise ValidationFailed(_message(error, "Invalid input for field/attribute", -1))

    def validate_query(self, query: dict[str, list[str]]) -> dict[str, list[str]]:
        """Validate a multi-valued query dict; return it stripped of unknown parameters
        when the schema allows additional properties (Nova ignores those)."""
        if not query:
            # Same input, same verdict: validate the empty query once per schema.
            if self._empty_query_error is None:
                self._empty_query_error = self._query_error(query) or ""
            if self._empty_query_error:
                raise ValidationFailed(self._empty_query_error)
            return {}
        message = self._query_error(query)
        if message is not None:
            raise ValidationFailed(message)
        if self.schema.get("additionalProperties", True) is False:
            return query
        known = set(self.schema.get("properties", {}))
        patterns = [re.compile(p) for p in self.schema.get("patternProperties", {})]
        return {
            k: vals for k, vals in query.items() if k in known or any(p.search(k) for p in patterns)
        }

    def _query_error(self, query: dict[str, list[str]]) -> str | None:
        for error in self.errors(query):
            return _message(error, "Invalid input for query parameters", 0)
        return None


def _message(error: jsonschema.ValidationError, prefix: str, which: int) -> str:
    if isinstance(error.cause, InvalidName):
        return str(error.cause)
    if error.path:
        field = error.path[which]
        return f"{prefix} {field}. Value: {_py_str(error.instance)}. {error.message}"
    return str(error.message)


def _py_str(value: Any) -> str:
    """Render a JSON value as Python's ``%s`` would (Nova formats values that way)."""
    return str(value)


@dataclass(frozen=True)
class Versioned:
    """Schemas that differ by microversion: ``Versioned(("2.1", s1), ("2.55", s2))``.

    Each entry applies from its version up to the next entry's version; ``until`` caps the
    last one (a request above it gets no schema).
    """

    entries: tuple[tuple[APIVersion, Schema | None], ...]
    until: APIVersion = MAX_VERSION

    @classmethod
    def of(cls, *entries: tuple[str, dict[str, Any] | None], until: str | None = None) -> Versioned:
        """Build from ``(version text, schema dict or None)`` pairs in ascending order."""
        built = tuple((v(ver), Schema(s) if s is not None else None) for ver, s in entries)
        return cls(built, v(until) if until else MAX_VERSION)

    def at(self, version: APIVersion) -> Schema | None:
        """The schema in force at ``version`` (None: no validation at that version).

        The legacy /v2 mount (2.0) gets the first entry when none starts at 2.0: like Nova's
        unversioned schemas, a table starting at 2.1 covers v2 too (relaxed), so no body
        reaches a handler unchecked.
        """
        if not self.entries:
            return None
        chosen: Schema | None = self.entries[0][1] if version == LEGACY_V2 else None
        for start, schema in self.entries:
            if version >= start:
                chosen = schema
        return chosen if version <= self.until else None


def strict_query(properties: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A query schema that rejects unknown parameters (Nova from 2.75 / 2.102)."""
    return {
        "type": "object",
        "properties": properties or {},
        "additionalProperties": False,
        **extra,
    }


def loose_query(properties: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A query schema that ignores unknown parameters (Nova before 2.75 / 2.102)."""
    return {"type": "object", "properties": properties or {}, "additionalProperties": True, **extra}


def multi(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter that may repeat: each value is checked against ``schema``."""
    return {"type": "array", "items": schema}


def single(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter that may appear at most once."""
    return {"type": "array", "items": schema, "maxItems": 1}
