"""Rows of the embedded identity service: projects, users, roles, assignments, keys, revocations.

The identity API's use cases (:mod:`openkeel.identity_api`) call this; it knows no rules about
who may do what, only rows, password hashes and uniqueness. Names are unique per domain
(projects, users) or globally (roles); a duplicate is :class:`IdentityConflict`, an unknown id
:class:`IdentityNotFound`. Deleting a project, user or role deletes its assignments in the same
transaction.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from openkeel.db.engine import reader
from openkeel.db.identity_tables import (
    SYSTEM_TARGET,
    app_credentials_table,
    assignments_table,
    install_tables,
    keys_table,
    now,
    projects_table,
    revocations_table,
    roles_table,
    users_table,
)

DEFAULT_DOMAIN_ID = "default"
DEFAULT_DOMAIN_NAME = "Default"
# scrypt parameters: 16 MiB and about 50 ms per hash on a small machine (Keystone's bcrypt
# default costs more).
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1


class IdentityError(Exception):
    """Base of the store's errors."""


class IdentityNotFound(IdentityError):
    """No such project, user or role (``kind`` names which)."""

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"Could not find {kind}: {ident}.")
        self.kind, self.ident = kind, ident


class IdentityConflict(IdentityError):
    """A name already taken in its domain."""

    def __init__(self, kind: str, name: str, domain_id: str | None = None) -> None:
        where = f" at domain ID {domain_id}" if domain_id else ""
        super().__init__(
            f"Conflict occurred attempting to store {kind} - Duplicate entry found with name "
            f"{name}{where}."
        )


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    domain_id: str
    description: str
    enabled: bool
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class User:
    id: str
    name: str
    domain_id: str
    enabled: bool
    default_project_id: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)
    tokens_valid_after: datetime.datetime | None = None
    has_password: bool = False


@dataclass(frozen=True)
class Role:
    id: str
    name: str
    description: str = ""


@dataclass(frozen=True)
class AppCredential:
    """An application credential (its secret is only ever kept hashed)."""

    id: str
    name: str
    user_id: str
    project_id: str
    description: str
    expires_at: datetime.datetime | None
    unrestricted: bool
    role_ids: tuple[str, ...]


@dataclass(frozen=True)
class Assignment:
    """``user_id`` holds ``role_id`` on ``target_id`` (a project id or SYSTEM_TARGET)."""

    user_id: str
    target_id: str
    role_id: str


def new_id() -> str:
    """Keystone's id format: 32 lower-case hex digits."""
    return uuid.uuid4().hex


def hash_password(password: str) -> str:
    """A salted scrypt hash in a self-describing text form."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    b64 = base64.b64encode
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def password_matches(password: str, stored: str | None) -> bool:
    """True when ``password`` hashes to ``stored`` (constant time)."""
    if not stored:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except ValueError:
        return False
    return hmac.compare_digest(got, expected)


def _project(row: sa.Row[Any]) -> Project:
    m = row._mapping
    return Project(
        m["id"], m["name"], m["domain_id"], m["description"], m["enabled"],
        tuple(json.loads(m["tags"] or "[]")),
    )  # fmt: skip


def _user(row: sa.Row[Any]) -> User:
    m = row._mapping
    return User(
        m["id"], m["name"], m["domain_id"], m["enabled"], m["default_project_id"],
        json.loads(m["extra"] or "{}"), m["tokens_valid_after"], bool(m["password_hash"]),
    )  # fmt: skip


def _app_credential(row: sa.Row[Any]) -> AppCredential:
    m = row._mapping
    return AppCredential(
        m["id"], m["name"], m["user_id"], m["project_id"], m["description"], m["expires_at"],
        m["unrestricted"], tuple(json.loads(m["roles"] or "[]")),
    )  # fmt: skip


def _role(row: sa.Row[Any]) -> Role:
    m = row._mapping
    return Role(m["id"], m["name"], m["description"])


class IdentityStore:
    """The identity rows on the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def install(self) -> None:
        """Create the tables when needed."""
        install_tables(self._engine)

    # -- reads ----------------------------------------------------------------------------

    def _one(self, table: sa.Table, clause: Any) -> sa.Row[Any] | None:
        with reader(self._engine).connect() as conn:
            return conn.execute(table.select().where(clause)).first()

    def _many(self, table: sa.Table, clauses: Iterable[Any], *order: Any) -> list[sa.Row[Any]]:
        with reader(self._engine).connect() as conn:
            return list(conn.execute(table.select().where(*clauses).order_by(*order)))

    def get_project(self, project_id: str) -> Project:
        row = self._one(projects_table, projects_table.c.id == project_id)
        if row is None:
            raise IdentityNotFound("project", project_id)
        return _project(row)

    def find_project(self, name: str, domain_id: str = DEFAULT_DOMAIN_ID) -> Project | None:
        t = projects_table
        row = self._one(t, sa.and_(t.c.name == name, t.c.domain_id == domain_id))
        return None if row is None else _project(row)

    def projects(
        self, name: str | None = None, domain_id: str | None = None, enabled: bool | None = None
    ) -> list[Project]:
        t = projects_table
        clauses = _filters(t, name=name, domain_id=domain_id, enabled=enabled)
        return [_project(r) for r in self._many(t, clauses, t.c.name)]

    def get_user(self, user_id: str) -> User:
        row = self._one(users_table, users_table.c.id == user_id)
        if row is None:
            raise IdentityNotFound("user", user_id)
        return _user(row)

    def find_user(self, name: str, domain_id: str = DEFAULT_DOMAIN_ID) -> User | None:
        t = users_table
        row = self._one(t, sa.and_(t.c.name == name, t.c.domain_id == domain_id))
        return None if row is None else _user(row)

    def users(
        self, name: str | None = None, domain_id: str | None = None, enabled: bool | None = None
    ) -> list[User]:
        t = users_table
        clauses = _filters(t, name=name, domain_id=domain_id, enabled=enabled)
        return [_user(r) for r in self._many(t, clauses, t.c.name)]

    def check_password(self, user_id: str, password: str) -> bool:
        """True when the user exists and ``password`` is theirs."""
        row = self._one(users_table, users_table.c.id == user_id)
        return row is not None and password_matches(password, row._mapping["password_hash"])

    def get_role(self, role_id: str) -> Role:
        row = self._one(roles_table, roles_table.c.id == role_id)
        if row is None:
            raise IdentityNotFound("role", role_id)
        return _role(row)

    def find_role(self, name: str) -> Role | None:
        row = self._one(roles_table, roles_table.c.name == name)
        return None if row is None else _role(row)

    def roles(self, name: str | None = None) -> list[Role]:
        t = roles_table
        return [_role(r) for r in self._many(t, _filters(t, name=name), t.c.name)]

    def assignments(
        self, user_id: str | None = None, target_id: str | None = None, role_id: str | None = None
    ) -> list[Assignment]:
        t = assignments_table
        clauses = _filters(t, user_id=user_id, target_id=target_id, role_id=role_id)
        rows = self._many(t, clauses, t.c.user_id, t.c.target_id, t.c.role_id)
        return [Assignment(**r._mapping) for r in rows]

    def roles_on(self, user_id: str, target_id: str) -> list[Role]:
        """The roles ``user_id`` was given on ``target_id`` (not the ones they imply)."""
        a, r = assignments_table, roles_table
        query = (
            sa.select(r)
            .join(a, a.c.role_id == r.c.id)
            .where(a.c.user_id == user_id, a.c.target_id == target_id)
            .order_by(r.c.name)
        )
        with reader(self._engine).connect() as conn:
            return [_role(row) for row in conn.execute(query)]

    # -- writes ---------------------------------------------------------------------------

    def create_project(
        self,
        name: str,
        domain_id: str = DEFAULT_DOMAIN_ID,
        description: str = "",
        enabled: bool = True,
        tags: Iterable[str] = (),
        project_id: str | None = None,
    ) -> Project:
        values = {
            "id": project_id or new_id(), "name": name, "domain_id": domain_id,
            "description": description, "enabled": enabled, "tags": json.dumps(list(tags)),
            "created_at": now(),
        }  # fmt: skip
        self._insert(projects_table, values, IdentityConflict("project", name, domain_id))
        return self.get_project(str(values["id"]))

    def update_project(self, project_id: str, changes: Mapping[str, Any]) -> Project:
        values = dict(changes)
        if "tags" in values:
            values["tags"] = json.dumps(list(values["tags"]))
        name = str(values.get("name", ""))
        project = self.get_project(project_id)
        self._update(
            projects_table, project_id, values,
            IdentityConflict("project", name, project.domain_id), "project",
        )  # fmt: skip
        return self.get_project(project_id)

    def delete_project(self, project_id: str) -> None:
        self._delete(projects_table, project_id, "project", assignments_table.c.target_id)

    def create_user(
        self,
        name: str,
        domain_id: str = DEFAULT_DOMAIN_ID,
        password: str | None = None,
        enabled: bool = True,
        default_project_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> User:
        values = {
            "id": new_id(), "name": name, "domain_id": domain_id, "enabled": enabled,
            "password_hash": None if password is None else hash_password(password),
            "default_project_id": default_project_id, "extra": json.dumps(dict(extra or {})),
            "created_at": now(),
        }  # fmt: skip
        self._insert(users_table, values, IdentityConflict("user", name, domain_id))
        return self.get_user(str(values["id"]))

    def update_user(self, user_id: str, changes: Mapping[str, Any]) -> User:
        """Set columns; ``password`` is hashed, ``extra`` merged; a new password or disabling
        invalidates the user's tokens issued so far."""
        user = self.get_user(user_id)
        values = {k: v for k, v in changes.items() if k not in ("password", "extra")}
        if "password" in changes:
            password = changes["password"]
            values["password_hash"] = None if password is None else hash_password(password)
            values["tokens_valid_after"] = now()
        if values.get("enabled") is False:
            values["tokens_valid_after"] = now()
        if "extra" in changes:
            merged = {**user.extra, **changes["extra"]}
            values["extra"] = json.dumps({k: v for k, v in merged.items() if v is not None})
        conflict = IdentityConflict("user", str(values.get("name", "")), user.domain_id)
        self._update(users_table, user_id, values, conflict, "user")
        return self.get_user(user_id)

    def delete_user(self, user_id: str) -> None:
        self._delete(users_table, user_id, "user", assignments_table.c.user_id)

    def create_role(self, name: str, description: str = "", role_id: str | None = None) -> Role:
        values = {"id": role_id or new_id(), "name": name, "description": description}
        self._insert(roles_table, values, IdentityConflict("role", name))
        return self.get_role(str(values["id"]))

    def update_role(self, role_id: str, changes: Mapping[str, Any]) -> Role:
        conflict = IdentityConflict("role", str(changes.get("name", "")))
        self._update(roles_table, role_id, dict(changes), conflict, "role")
        return self.get_role(role_id)

    def delete_role(self, role_id: str) -> None:
        self._delete(roles_table, role_id, "role", assignments_table.c.role_id)

    def grant(self, user_id: str, target_id: str, role_id: str) -> None:
        """Give the role (idempotent)."""
        values = {"user_id": user_id, "target_id": target_id, "role_id": role_id}
        try:
            with self._engine.begin() as conn:
                conn.execute(assignments_table.insert().values(**values))
        except sa.exc.IntegrityError:
            pass  # already granted

    def revoke(self, user_id: str, target_id: str, role_id: str) -> bool:
        """Take the role back; False when it was not given."""
        t = assignments_table
        query = t.delete().where(
            t.c.user_id == user_id, t.c.target_id == target_id, t.c.role_id == role_id
        )
        with self._engine.begin() as conn:
            return bool(conn.execute(query).rowcount)

    def create_app_credential(
        self,
        user_id: str,
        project_id: str,
        name: str,
        secret: str,
        role_ids: Iterable[str],
        description: str = "",
        expires_at: datetime.datetime | None = None,
        unrestricted: bool = False,
    ) -> AppCredential:
        values = {
            "id": new_id(), "name": name, "user_id": user_id, "project_id": project_id,
            "secret_hash": hash_password(secret), "description": description,
            "expires_at": expires_at, "unrestricted": unrestricted,
            "roles": json.dumps(list(role_ids)),
        }  # fmt: skip
        self._insert(
            app_credentials_table, values, IdentityConflict("application credential", name)
        )
        return self.get_app_credential(str(values["id"]))

    def get_app_credential(self, credential_id: str) -> AppCredential:
        t = app_credentials_table
        row = self._one(t, t.c.id == credential_id)
        if row is None:
            raise IdentityNotFound("application credential", credential_id)
        return _app_credential(row)

    def find_app_credential(self, user_id: str, name: str) -> AppCredential | None:
        t = app_credentials_table
        row = self._one(t, sa.and_(t.c.user_id == user_id, t.c.name == name))
        return None if row is None else _app_credential(row)

    def app_credentials(self, user_id: str, name: str | None = None) -> list[AppCredential]:
        t = app_credentials_table
        clauses = _filters(t, user_id=user_id, name=name)
        return [_app_credential(r) for r in self._many(t, clauses, t.c.name)]

    def check_app_credential_secret(self, credential_id: str, secret: str) -> bool:
        t = app_credentials_table
        row = self._one(t, t.c.id == credential_id)
        return row is not None and password_matches(secret, row._mapping["secret_hash"])

    def delete_app_credential(self, credential_id: str) -> None:
        t = app_credentials_table
        with self._engine.begin() as conn:
            if not conn.execute(t.delete().where(t.c.id == credential_id)).rowcount:
                raise IdentityNotFound("application credential", credential_id)

    # -- token keys and revocations -------------------------------------------------------

    def token_keys(self) -> list[str]:
        """The Fernet keys, newest first; one is made on first use."""
        with reader(self._engine).connect() as conn:
            keys = [r.key for r in conn.execute(keys_table.select().order_by(keys_table.c.id))]
        if keys:
            return keys[::-1]
        key = base64.urlsafe_b64encode(os.urandom(32)).decode()
        with self._engine.begin() as conn:
            conn.execute(keys_table.insert().values(key=key, created_at=now()))
        return self.token_keys()  # another process may have raced us: every key is kept

    def revoke_token(self, audit_id: str, expires_at: datetime.datetime) -> None:
        """Remember a revoked token until it would have expired anyway."""
        t = revocations_table
        with self._engine.begin() as conn:
            conn.execute(t.delete().where(t.c.expires_at < now()))
            if conn.execute(t.select().where(t.c.audit_id == audit_id)).first() is None:
                conn.execute(t.insert().values(audit_id=audit_id, expires_at=expires_at))

    def is_revoked(self, audit_id: str) -> bool:
        t = revocations_table
        return self._one(t, t.c.audit_id == audit_id) is not None

    # -- helpers --------------------------------------------------------------------------

    def _insert(self, table: sa.Table, values: Mapping[str, Any], conflict: Exception) -> None:
        try:
            with self._engine.begin() as conn:
                conn.execute(table.insert().values(**values))
        except sa.exc.IntegrityError as exc:
            raise conflict from exc

    def _update(
        self,
        table: sa.Table,
        ident: str,
        values: Mapping[str, Any],
        conflict: Exception,
        kind: str,
    ) -> None:
        if not values:
            return
        try:
            with self._engine.begin() as conn:
                changed = conn.execute(
                    table.update().where(table.c.id == ident).values(**values)
                ).rowcount
        except sa.exc.IntegrityError as exc:
            raise conflict from exc
        if not changed:
            raise IdentityNotFound(kind, ident)

    def _delete(self, table: sa.Table, ident: str, kind: str, assigned: sa.Column[Any]) -> None:
        with self._engine.begin() as conn:
            if not conn.execute(table.delete().where(table.c.id == ident)).rowcount:
                raise IdentityNotFound(kind, ident)
            conn.execute(assignments_table.delete().where(assigned == ident))
            if kind in ("user", "project"):  # its application credentials go too
                creds = app_credentials_table
                column = creds.c.user_id if kind == "user" else creds.c.project_id
                conn.execute(creds.delete().where(column == ident))


def _filters(table: sa.Table, **wanted: Any) -> list[Any]:
    return [table.c[name] == value for name, value in wanted.items() if value is not None]


__all__ = [
    "DEFAULT_DOMAIN_ID",
    "DEFAULT_DOMAIN_NAME",
    "SYSTEM_TARGET",
    "AppCredential",
    "Assignment",
    "IdentityConflict",
    "IdentityError",
    "IdentityNotFound",
    "IdentityStore",
    "Project",
    "Role",
    "User",
]
