"""SQL for ``console_auth_tokens`` rows of a cell DB (Nova's ConsoleAuthToken).

The compute role authorizes a token when it hands out a console URL; the console proxies and
``GET /os-console-auth-tokens/{token}`` validate one; expired ones are removed when a new one
is authorized; deleting a server removes its own (db/repositories/instances.py).
Only the SHA-256 of a token is stored: the token itself lives in the URL the user was given.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.db.schema import cell as cell_schema

_T = cell_schema.console_auth_tokens


@dataclass(frozen=True)
class ConsoleTarget:
    """What a console token opens: the guest endpoint a proxy connects to."""

    console_type: str
    host: str
    port: int
    instance_uuid: str
    internal_access_path: str | None = None
    tls_port: int | None = None
    access_url_base: str | None = None


@dataclass(frozen=True)
class ConsoleAuthorization:
    """A stored token's target and when it expires (seconds since the epoch)."""

    target: ConsoleTarget
    expires: int


def token_hash(token: str) -> str:
    """The stored form of ``token`` (hex SHA-256, as Nova's get_sha256_str)."""
    return hashlib.sha256(token.encode()).hexdigest()


def authorize(conn: sa.Connection, target: ConsoleTarget, expires: int) -> str:
    """Store a new random token for ``target`` valid until ``expires``; the token."""
    token = str(uuid.uuid4())
    conn.execute(
        sa.insert(_T).values(
            token_hash=token_hash(token), console_type=target.console_type, host=target.host,
            port=target.port, tls_port=target.tls_port,
            internal_access_path=target.internal_access_path,
            instance_uuid=target.instance_uuid, expires=expires,
            access_url_base=target.access_url_base,
        )
    )  # fmt: skip
    return token


def validate(conn: sa.Connection, token: str, now: int) -> ConsoleAuthorization | None:
    """The authorization of ``token`` if it is stored and not expired at ``now`` (Nova keeps a
    token usable until it expires: validating does not consume it)."""
    row = conn.execute(
        sa.select(_T).where(_T.c.token_hash == token_hash(token), _T.c.expires > now)
    ).first()
    if row is None:
        return None
    target = ConsoleTarget(
        row.console_type, row.host, row.port, row.instance_uuid,
        row.internal_access_path, row.tls_port, row.access_url_base,
    )  # fmt: skip
    return ConsoleAuthorization(target, row.expires)


def delete_expired(conn: sa.Connection, now: int) -> int:
    """Remove the tokens expired at ``now``; how many."""
    result = conn.execute(sa.delete(_T).where(_T.c.expires <= now))
    return result.rowcount or 0
