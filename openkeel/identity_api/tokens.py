"""Tokens as Keystone makes them: Fernet-sealed payloads, nothing stored per token.

A token carries who (user), how (auth methods), for what (project, or the whole system, or
nothing), until when, and its audit ids. Everything else (names, roles, the catalog) is read
when the token is validated, so a role taken away or a user disabled takes effect at once. The
keys are the identity store's (API database): every process sharing that database accepts every
token. Revoked tokens are remembered by audit id until they expire.
"""

from __future__ import annotations

import base64
import datetime
import os
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from cryptography.fernet import Fernet, InvalidToken, MultiFernet


@dataclass(frozen=True)
class TokenPayload:
    """What a token says of itself."""

    user_id: str
    methods: tuple[str, ...]
    project_id: str | None
    system: bool
    issued_at: datetime.datetime  # naive UTC
    expires_at: datetime.datetime  # naive UTC
    # This token's audit id first, then the one of the token it was rescoped from.
    audit_ids: tuple[str, ...]
    # The application credential it was issued for, if any (its roles bound the token's).
    app_credential_id: str | None = None


def new_audit_id() -> str:
    """Keystone's audit id form: 16 random bytes, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")


def _stamp(moment: datetime.datetime) -> float:
    return moment.replace(tzinfo=datetime.UTC).timestamp()


def _moment(stamp: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).replace(tzinfo=None)


class TokenCodec:
    """Seals and opens payloads with the keys ``keys()`` returns (newest first)."""

    def __init__(self, keys: Callable[[], list[str]]) -> None:
        self._keys = keys
        self._fernet: MultiFernet | None = None

    def _current(self) -> MultiFernet:
        if self._fernet is None:
            self._fernet = MultiFernet([Fernet(key.encode()) for key in self._keys()])
        return self._fernet

    def seal(self, payload: TokenPayload) -> str:
        data = {
            "u": payload.user_id,
            "m": list(payload.methods),
            "p": payload.project_id,
            "s": payload.system,
            "i": _stamp(payload.issued_at),
            "e": _stamp(payload.expires_at),
            "a": list(payload.audit_ids),
        }
        if payload.app_credential_id:
            data["ac"] = payload.app_credential_id
        return self._current().encrypt(orjson.dumps(data)).decode()

    def open(self, token: str) -> TokenPayload | None:
        """The payload, or None when the token was not made with one of our keys."""
        try:
            raw = token.encode("ascii")
        except UnicodeEncodeError:
            return None
        try:
            data = orjson.loads(self._current().decrypt(raw))
        except InvalidToken:
            self._fernet = None  # another process may have added a key: read them again
            try:
                data = orjson.loads(self._current().decrypt(raw))
            except InvalidToken:
                return None
        return TokenPayload(
            user_id=data["u"],
            methods=tuple(data["m"]),
            project_id=data["p"],
            system=bool(data["s"]),
            issued_at=_moment(data["i"]),
            expires_at=_moment(data["e"]),
            audit_ids=tuple(data["a"]),
            app_credential_id=data.get("ac"),
        )
