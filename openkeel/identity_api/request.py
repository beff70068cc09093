"""What an identity API handler receives (IdentityRequest) and returns (Reply); body checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import orjson

from openkeel.identity_api.faults import BadRequest, Unauthorized
from openkeel.identity_api.service import Caller, IdentityService

PREFIX = "/identity"


@dataclass
class IdentityRequest:
    """One parsed request; ``caller`` is set unless the endpoint is anonymous."""

    method: str
    params: dict[str, str]
    query: list[tuple[str, str]]
    headers: dict[str, str]
    service: IdentityService
    # scheme://host[:port] the client used; the identity API is at ``root + PREFIX``.
    root: str
    body: bytes = b""
    _caller: Caller | None = None

    @property
    def base(self) -> str:
        return self.root + PREFIX

    @property
    def caller(self) -> Caller:
        if self._caller is None:
            raise Unauthorized("The request you have made requires authentication.")
        return self._caller

    def json(self, schema: Mapping[str, Any]) -> Any:
        """The body as JSON, checked against ``schema`` (400 as Keystone words it)."""
        try:
            document = orjson.loads(self.body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Malformed JSON in request body.") from exc
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft4Validator(schema).iter_errors(document)
        )
        if error is not None:
            path = "/".join(str(p) for p in error.absolute_path)
            where = f"'{path}'" if path else "'<root>'"
            raise BadRequest(f"Invalid input for field {where}: {error.message}")
        return document

    def value(self, name: str) -> str | None:
        """A query parameter's last value."""
        found = [v for k, v in self.query if k == name]
        return found[-1] if found else None

    def has(self, name: str) -> bool:
        return any(k == name for k, _ in self.query)

    def flag(self, name: str) -> bool | None:
        """A boolean query filter (``enabled``): Keystone's spellings of false, else true."""
        value = self.value(name)
        if value is None:
            return None
        return value.lower() not in ("0", "false", "no", "off")


@dataclass
class Reply:
    """A handler's answer: JSON ``body`` (None: no body), status and headers."""

    body: Any = None
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)


def collection(req: IdentityRequest, key: str, items: list[Any], path: str = "") -> Reply:
    """A Keystone list: ``{key: [...], "links": {...}}`` (no paging: the lists are small);
    ``path`` (under /v3) when it is not ``key``."""
    query = "&".join(f"{k}={v}" for k, v in req.query)
    path = f"{req.base}/v3/{path or key}"
    self_link = f"{path}?{query}" if query else path
    return Reply({key: items, "links": {"self": self_link, "previous": None, "next": None}})
