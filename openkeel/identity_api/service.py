"""The identity service's use cases: issue and validate tokens, manage projects, users, roles.

Every rule about who may do what lives here (Keystone's default policies, simplified: the
``admin`` role on any project or on the system is the cloud administrator; a user may read
themselves, their projects and their own tokens). Handlers in :mod:`openkeel.identity_api.resources`
parse requests and render answers; the rows are :class:`openkeel.db.identity_store.IdentityStore`'s.

Roles imply others as Keystone's bootstrap makes them: admin -> manager -> member -> reader. A
token lists the roles its holder has *now* (read at validation), implied ones included.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from openkeel.db.identity_store import (
    DEFAULT_DOMAIN_ID,
    DEFAULT_DOMAIN_NAME,
    SYSTEM_TARGET,
    AppCredential,
    Assignment,
    IdentityConflict,
    IdentityNotFound,
    IdentityStore,
    Project,
    Role,
    User,
)
from openkeel.db.identity_tables import now
from openkeel.identity_api.catalog import CatalogEntry
from openkeel.identity_api.faults import (
    AUTH_REQUIRED,
    BadRequest,
    Conflict,
    NotFound,
    NotImplementedFault,
    Unauthorized,
    forbidden,
)
from openkeel.identity_api.tokens import TokenCodec, TokenPayload, new_audit_id

LOG = logging.getLogger(__name__)
T = TypeVar("T")

# Keystone's bootstrap roles and the implications it creates between them.
DEFAULT_ROLES = ("admin", "manager", "member", "reader", "service")
IMPLIES = {"admin": "manager", "manager": "member", "member": "reader"}
ADMIN_ROLE = "admin"


@dataclass(frozen=True)
class Caller:
    """A validated token: its payload, holder, scope and the roles they have now."""

    token: str
    payload: TokenPayload
    user: User
    project: Project | None
    roles: tuple[Role, ...]
    app_credential: AppCredential | None = None

    @property
    def is_admin(self) -> bool:
        return any(role.name == ADMIN_ROLE for role in self.roles)

    @property
    def role_names(self) -> tuple[str, ...]:
        return tuple(role.name for role in self.roles)


def domain_of(ref: Mapping[str, Any] | None) -> str:
    """The domain id a ``{"id"}`` / ``{"name"}`` reference names (only ``default`` exists)."""
    if not ref:
        return DEFAULT_DOMAIN_ID
    if "id" in ref:
        if ref["id"] != DEFAULT_DOMAIN_ID:
            raise Unauthorized(AUTH_REQUIRED)
        return DEFAULT_DOMAIN_ID
    if ref.get("name") not in (DEFAULT_DOMAIN_NAME, DEFAULT_DOMAIN_ID):
        raise Unauthorized(AUTH_REQUIRED)
    return DEFAULT_DOMAIN_ID


__all__ = [
    "DEFAULT_DOMAIN_ID",
    "DEFAULT_DOMAIN_NAME",
    "SYSTEM_TARGET",
    "AppCredential",
    "Caller",
    "IdentityService",
]


class IdentityService:
    """Tokens and the identity records behind them."""

    def __init__(
        self,
        store: IdentityStore,
        catalog: tuple[CatalogEntry, ...],
        expiration: int = 3600,
        clock: Callable[[], datetime.datetime] = now,
    ) -> None:
        self.store = store
        self.catalog = catalog
        self.expiration = expiration
        self._clock = clock
        self._codec = TokenCodec(store.token_keys)
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # -- change notification (in-process token caches forget what they knew) ----------------

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every change that can invalidate a validated token."""
        with self._lock:
            self._listeners.append(listener)

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    # -- tokens -----------------------------------------------------------------------------

    def authenticate(self, auth: Mapping[str, Any]) -> Caller:
        """``POST /v3/auth/tokens``: the new token's caller (401 for bad credentials)."""
        identity = auth["identity"]
        methods = tuple(identity["methods"])
        if not methods:
            raise BadRequest("Invalid input for field 'identity/methods': [] is too short")
        expires_at: datetime.datetime | None = None
        audit_chain: tuple[str, ...] = ()
        credential: AppCredential | None = None
        if "application_credential" in methods:
            if auth.get("scope") is not None:
                raise Unauthorized("Application credentials cannot request a scope.")
            credential = self._credential(identity.get("application_credential"))
            user = self.store.get_user(credential.user_id)
            expires_at = _earliest(credential.expires_at, self._clock() + datetime.timedelta(
                seconds=self.expiration))  # fmt: skip
        elif "password" in methods:
            user = self._password_user(identity.get("password"))
        elif "token" in methods:
            ref = identity.get("token") or {}
            original = self._valid(str(ref.get("id", "")))
            if original is None:
                raise Unauthorized(AUTH_REQUIRED)
            user, expires_at = original.user, original.payload.expires_at
            audit_chain = original.payload.audit_ids[:1]
        else:
            raise Unauthorized("Attempted to authenticate with an unsupported method.")
        if not user.enabled:
            raise Unauthorized(AUTH_REQUIRED)
        project_id: str | None = None
        if credential is not None:
            project_id, system = credential.project_id, False
        else:
            project_id, system = self._scope(user, auth.get("scope"))
        issued = self._clock()
        if expires_at is None:
            expires_at = issued + datetime.timedelta(seconds=self.expiration)
        payload = TokenPayload(
            user.id, methods, project_id, system, issued, expires_at,
            (new_audit_id(), *audit_chain), credential.id if credential else None,
        )  # fmt: skip
        token = self._codec.seal(payload)
        caller = self._caller(token, payload)
        if caller is None:  # scoped to something the user has no role on
            raise Unauthorized(AUTH_REQUIRED)
        return caller

    def _password_user(self, method: Mapping[str, Any] | None) -> User:
        ref = (method or {}).get("user") or {}
        password = ref.get("password")
        if not isinstance(password, str):
            raise BadRequest("Invalid input for field 'identity/password/user': "
                             "'password' is a required property")  # fmt: skip
        if "id" in ref:
            try:
                user = self.store.get_user(str(ref["id"]))
            except IdentityNotFound as exc:
                raise Unauthorized(AUTH_REQUIRED) from exc
        elif "name" in ref:
            found = self.store.find_user(str(ref["name"]), domain_of(ref.get("domain")))
            if found is None:
                raise Unauthorized(AUTH_REQUIRED)
            user = found
        else:
            raise BadRequest("Invalid input for field 'identity/password/user': "
                             "either 'id' or 'name' is required")  # fmt: skip
        if not self.store.check_password(user.id, password):
            LOG.info("password authentication failed for user %s", user.id)
            raise Unauthorized(AUTH_REQUIRED)
        return user

    def _credential(self, method: Mapping[str, Any] | None) -> AppCredential:
        """The application credential an ``application_credential`` method names, if its
        secret is right and it has not expired (401 otherwise)."""
        ref = method or {}
        secret = ref.get("secret")
        if not isinstance(secret, str):
            raise BadRequest("Invalid input for field 'identity/application_credential': "
                             "'secret' is a required property")  # fmt: skip
        found: AppCredential | None = None
        if "id" in ref:
            try:
                found = self.store.get_app_credential(str(ref["id"]))
            except IdentityNotFound:
                found = None
        elif "name" in ref:
            owner = ref.get("user") or {}
            user = None
            if "id" in owner:
                user = (
                    self.store.get_user(str(owner["id"]))
                    if self._user_exists(owner["id"])
                    else None
                )
            elif "name" in owner:
                user = self.store.find_user(str(owner["name"]), domain_of(owner.get("domain")))
            found = (
                None if user is None else self.store.find_app_credential(user.id, str(ref["name"]))
            )
        else:
            raise BadRequest("Invalid input for field 'identity/application_credential': "
                             "either 'id' or 'name' is required")  # fmt: skip
        if found is None or not self.store.check_app_credential_secret(found.id, secret):
            raise Unauthorized(AUTH_REQUIRED)
        if found.expires_at is not None and found.expires_at <= self._clock():
            raise Unauthorized(AUTH_REQUIRED)
        return found

    def _user_exists(self, user_id: object) -> bool:
        try:
            self.store.get_user(str(user_id))
        except IdentityNotFound:
            return False
        return True

    def _scope(self, user: User, scope: Any) -> tuple[str | None, bool]:
        """(project id, system) the token is for; unscoped requests get the default project
        when the user has a role on it, as Keystone does."""
        if scope is None:
            default = user.default_project_id
            if default and self._has_roles(user.id, default):
                return default, False
            return None, False
        if scope == "unscoped":
            return None, False
        if not isinstance(scope, Mapping):
            raise BadRequest("Invalid input for field 'scope': not an object")
        if "system" in scope:
            return None, True
        if "domain" in scope:
            raise Unauthorized("Domain-scoped tokens are not offered by this identity service.")
        project = scope.get("project") or {}
        if "id" in project:
            return str(project["id"]), False
        if "name" in project:
            found = self.store.find_project(str(project["name"]), domain_of(project.get("domain")))
            if found is None:
                raise Unauthorized(AUTH_REQUIRED)
            return found.id, False
        raise BadRequest("Invalid input for field 'scope/project': either 'id' or 'name' is "
                         "required")  # fmt: skip

    def _has_roles(self, user_id: str, target_id: str) -> bool:
        return bool(self.store.roles_on(user_id, target_id))

    def validate(self, token: str) -> Caller:
        """The caller of ``X-Auth-Token`` (401 when it is not valid now)."""
        caller = self._valid(token)
        if caller is None:
            raise Unauthorized(AUTH_REQUIRED)
        return caller

    def validate_subject(self, caller: Caller, subject: str) -> Caller:
        """``GET /v3/auth/tokens``: the subject token (404 when not valid); the caller must be
        its holder, an admin or a service."""
        if not (caller.is_admin or "service" in caller.role_names):
            target = self._valid(subject)
            if target is None or target.user.id != caller.user.id:
                raise forbidden("validate_token")
            return target
        found = self._valid(subject)
        if found is None:
            raise NotFound(f"Could not find token: {subject}")
        return found

    def revoke(self, caller: Caller, subject: str) -> None:
        """``DELETE /v3/auth/tokens``."""
        target = self._valid(subject)
        if target is None:
            raise NotFound(f"Could not find token: {subject}")
        if not (caller.is_admin or target.user.id == caller.user.id):
            raise forbidden("revoke_token")
        self.store.revoke_token(target.payload.audit_ids[0], target.payload.expires_at)
        self._changed()

    def _valid(self, token: str) -> Caller | None:
        payload = self._codec.open(token) if token else None
        if payload is None or payload.expires_at <= self._clock():
            return None
        if self.store.is_revoked(payload.audit_ids[0]):
            return None
        return self._caller(token, payload)

    def _caller(self, token: str, payload: TokenPayload) -> Caller | None:
        try:
            user = self.store.get_user(payload.user_id)
        except IdentityNotFound:
            return None
        if not user.enabled:
            return None
        if user.tokens_valid_after is not None and payload.issued_at < user.tokens_valid_after:
            return None
        project = None
        if payload.project_id is not None:
            try:
                project = self.store.get_project(payload.project_id)
            except IdentityNotFound:
                return None
            if not project.enabled:
                return None
            granted = self.store.roles_on(user.id, project.id)
        elif payload.system:
            granted = self.store.roles_on(user.id, SYSTEM_TARGET)
        else:
            return Caller(token, payload, user, None, ())
        if not granted:
            return None
        roles = self.effective(granted)
        credential = None
        if payload.app_credential_id is not None:
            try:
                credential = self.store.get_app_credential(payload.app_credential_id)
            except IdentityNotFound:
                return None
            if credential.expires_at is not None and credential.expires_at <= self._clock():
                return None
            # Only the roles it was given, and only while the user still has them.
            roles = tuple(r for r in roles if r.id in credential.role_ids)
            if not roles:
                return None
        return Caller(token, payload, user, project, roles, credential)

    def effective(self, granted: Iterable[Role]) -> tuple[Role, ...]:
        """``granted`` plus the roles they imply (by name), sorted by name."""
        by_name = {role.name: role for role in self.store.roles()}
        found = {role.name: role for role in granted}
        pending = list(found)
        while pending:
            implied = IMPLIES.get(pending.pop())
            if implied and implied not in found and implied in by_name:
                found[implied] = by_name[implied]
                pending.append(implied)
        return tuple(sorted(found.values(), key=lambda r: r.name))

    # -- what a token may see ----------------------------------------------------------------

    def projects_of(self, user_id: str) -> list[Project]:
        """Enabled projects the user has a role on (``/v3/auth/projects``)."""
        ids = {a.target_id for a in self.store.assignments(user_id=user_id)}
        return [p for p in self.store.projects() if p.id in ids and p.enabled]

    def has_system_role(self, user_id: str) -> bool:
        return self._has_roles(user_id, SYSTEM_TARGET)

    # -- projects ----------------------------------------------------------------------------

    def list_projects(self, caller: Caller, filters: Mapping[str, Any]) -> list[Project]:
        _admin(caller, "list_projects")
        return self.store.projects(**filters)

    def get_project(self, caller: Caller, project_id: str) -> Project:
        project = self._project(project_id)
        if not (caller.is_admin or self._has_roles(caller.user.id, project_id)):
            raise forbidden("get_project")
        return project

    def create_project(self, caller: Caller, ref: Mapping[str, Any]) -> Project:
        _admin(caller, "create_project")
        if ref.get("is_domain"):
            raise NotImplementedFault("Domains other than 'default' are not offered by this "
                                      "identity service.")  # fmt: skip
        domain_id = ref.get("domain_id") or DEFAULT_DOMAIN_ID
        _known_domain(domain_id)
        parent = ref.get("parent_id")
        if parent not in (None, domain_id):
            raise NotImplementedFault("Project hierarchies are not offered by this identity "
                                      "service.")  # fmt: skip
        return _stored(
            lambda: self.store.create_project(
                ref["name"], domain_id, ref.get("description") or "",
                ref.get("enabled", True), ref.get("tags") or (),
            )
        )  # fmt: skip

    def update_project(self, caller: Caller, project_id: str, ref: Mapping[str, Any]) -> Project:
        _admin(caller, "update_project")
        changes = {k: ref[k] for k in ("name", "description", "enabled", "tags") if k in ref}
        project = _stored(lambda: self.store.update_project(project_id, changes))
        self._changed()
        return project

    def delete_project(self, caller: Caller, project_id: str) -> None:
        _admin(caller, "delete_project")
        _stored(lambda: self.store.delete_project(project_id))
        self._changed()

    def _project(self, project_id: str) -> Project:
        return _stored(lambda: self.store.get_project(project_id))

    # -- users -------------------------------------------------------------------------------

    def list_users(self, caller: Caller, filters: Mapping[str, Any]) -> list[User]:
        _admin(caller, "list_users")
        return self.store.users(**filters)

    def get_user(self, caller: Caller, user_id: str) -> User:
        if not (caller.is_admin or caller.user.id == user_id):
            raise forbidden("get_user")
        return _stored(lambda: self.store.get_user(user_id))

    def create_user(self, caller: Caller, ref: Mapping[str, Any], extra: Mapping[str, Any]) -> User:
        _admin(caller, "create_user")
        domain_id = ref.get("domain_id") or DEFAULT_DOMAIN_ID
        _known_domain(domain_id)
        default_project = ref.get("default_project_id")
        if default_project is not None:
            self._project(default_project)
        return _stored(
            lambda: self.store.create_user(
                ref["name"], domain_id, ref.get("password"), ref.get("enabled", True),
                default_project, extra,
            )
        )  # fmt: skip

    def update_user(
        self, caller: Caller, user_id: str, ref: Mapping[str, Any], extra: Mapping[str, Any]
    ) -> User:
        _admin(caller, "update_user")
        changes: dict[str, Any] = {
            k: ref[k] for k in ("name", "enabled", "default_project_id", "password") if k in ref
        }
        if ref.get("default_project_id") is not None:
            self._project(ref["default_project_id"])
        if extra:
            changes["extra"] = extra
        user = _stored(lambda: self.store.update_user(user_id, changes))
        self._changed()
        return user

    def change_password(self, caller: Caller, user_id: str, original: str, new: str) -> None:
        """``POST /v3/users/{id}/password``: the user themselves, knowing the old one."""
        if caller.user.id != user_id:
            raise forbidden("change_password")
        if not self.store.check_password(user_id, original):
            raise Unauthorized(AUTH_REQUIRED)
        self.store.update_user(user_id, {"password": new})
        self._changed()

    def delete_user(self, caller: Caller, user_id: str) -> None:
        _admin(caller, "delete_user")
        _stored(lambda: self.store.delete_user(user_id))
        self._changed()

    def user_projects(self, caller: Caller, user_id: str) -> list[Project]:
        if not (caller.is_admin or caller.user.id == user_id):
            raise forbidden("list_user_projects")
        _stored(lambda: self.store.get_user(user_id))
        return self.projects_of(user_id)

    # -- roles and assignments ---------------------------------------------------------------

    def list_roles(self, caller: Caller, name: str | None) -> list[Role]:
        _admin(caller, "list_roles")
        return self.store.roles(name)

    def get_role(self, caller: Caller, role_id: str) -> Role:
        _admin(caller, "get_role")
        return _stored(lambda: self.store.get_role(role_id))

    def create_role(self, caller: Caller, ref: Mapping[str, Any]) -> Role:
        _admin(caller, "create_role")
        if ref.get("domain_id"):
            _known_domain(ref["domain_id"])
            raise NotImplementedFault("Domain-specific roles are not offered by this identity "
                                      "service.")  # fmt: skip
        return _stored(lambda: self.store.create_role(ref["name"], ref.get("description") or ""))

    def update_role(self, caller: Caller, role_id: str, ref: Mapping[str, Any]) -> Role:
        _admin(caller, "update_role")
        changes = {k: ref[k] for k in ("name", "description") if k in ref}
        role = _stored(lambda: self.store.update_role(role_id, changes))
        self._changed()
        return role

    def delete_role(self, caller: Caller, role_id: str) -> None:
        _admin(caller, "delete_role")
        _stored(lambda: self.store.delete_role(role_id))
        self._changed()

    def _target(self, target_id: str) -> str:
        if target_id != SYSTEM_TARGET:
            self._project(target_id)
        return target_id

    def grant(self, caller: Caller, target_id: str, user_id: str, role_id: str) -> None:
        _admin(caller, "create_grant")
        self._target(target_id)
        _stored(lambda: self.store.get_user(user_id))
        _stored(lambda: self.store.get_role(role_id))
        self.store.grant(user_id, target_id, role_id)
        self._changed()

    def check_grant(self, caller: Caller, target_id: str, user_id: str, role_id: str) -> None:
        _admin(caller, "check_grant")
        self._target(target_id)
        _stored(lambda: self.store.get_user(user_id))
        _stored(lambda: self.store.get_role(role_id))
        if not self.store.assignments(user_id, target_id, role_id):
            raise _no_assignment(role_id, user_id, target_id)

    def revoke_grant(self, caller: Caller, target_id: str, user_id: str, role_id: str) -> None:
        _admin(caller, "revoke_grant")
        self._target(target_id)
        if not self.store.revoke(user_id, target_id, role_id):
            _stored(lambda: self.store.get_user(user_id))
            _stored(lambda: self.store.get_role(role_id))
            raise _no_assignment(role_id, user_id, target_id)
        self._changed()

    def grants(self, caller: Caller, target_id: str, user_id: str) -> list[Role]:
        _admin(caller, "list_grants")
        self._target(target_id)
        _stored(lambda: self.store.get_user(user_id))
        return self.store.roles_on(user_id, target_id)

    def role_assignments(
        self,
        caller: Caller,
        user_id: str | None,
        target_id: str | None,
        role_id: str | None,
        effective: bool,
    ) -> list[Assignment]:
        """``GET /v3/role_assignments``: an admin sees all; a user may list their own."""
        if not (caller.is_admin or (user_id is not None and user_id == caller.user.id)):
            raise forbidden("list_role_assignments")
        found = self.store.assignments(user_id, target_id, None)
        if effective:
            roles = {role.id: role for role in self.store.roles()}
            expanded: list[Assignment] = []
            for a in found:
                granted = [roles[a.role_id]] if a.role_id in roles else []
                expanded += [Assignment(a.user_id, a.target_id, r.id)
                             for r in self.effective(granted)]  # fmt: skip
            found = sorted(set(expanded), key=lambda a: (a.user_id, a.target_id, a.role_id))
        return [a for a in found if role_id is None or a.role_id == role_id]

    # -- application credentials ------------------------------------------------------------

    def create_app_credential(
        self, caller: Caller, user_id: str, ref: Mapping[str, Any]
    ) -> tuple[AppCredential, str]:
        """A new credential of the caller for the caller's project; its secret (given or
        made), shown only now."""
        if caller.user.id != user_id:
            raise forbidden("create_application_credential")
        if caller.app_credential is not None and not caller.app_credential.unrestricted:
            raise forbidden("create_application_credential")
        if caller.project is None:
            raise BadRequest("Application credentials are created with a project-scoped token.")
        held = {r.id: r for r in caller.roles}
        names = {r.name: r for r in caller.roles}
        wanted: list[Role] = []
        for item in ref.get("roles") or ():
            role = held.get(str(item.get("id"))) or names.get(str(item.get("name")))
            if role is None:
                raise forbidden("create_application_credential")
            wanted.append(role)
        expires = ref.get("expires_at")
        expires_at = None
        if expires:
            try:
                expires_at = datetime.datetime.fromisoformat(str(expires).replace("Z", "+00:00"))
            except ValueError as exc:
                raise BadRequest(f"Invalid input for field 'expires_at': {expires!r}") from exc
            if expires_at.tzinfo is not None:
                expires_at = expires_at.astimezone(datetime.UTC).replace(tzinfo=None)
            if expires_at <= self._clock():
                raise BadRequest(
                    "The expiration date of the application credential is in the past."
                )
        secret = ref.get("secret") or secrets.token_urlsafe(48)
        credential = _stored(
            lambda: self.store.create_app_credential(
                user_id, caller.project.id if caller.project else "", ref["name"], secret,
                [r.id for r in (wanted or caller.roles)], ref.get("description") or "",
                expires_at, bool(ref.get("unrestricted", False)),
            )
        )  # fmt: skip
        return credential, secret

    def app_credentials(
        self, caller: Caller, user_id: str, name: str | None
    ) -> list[AppCredential]:
        if not (caller.is_admin or caller.user.id == user_id):
            raise forbidden("list_application_credentials")
        return self.store.app_credentials(user_id, name)

    def get_app_credential(self, caller: Caller, user_id: str, credential_id: str) -> AppCredential:
        if not (caller.is_admin or caller.user.id == user_id):
            raise forbidden("get_application_credential")
        credential = _stored(lambda: self.store.get_app_credential(credential_id))
        if credential.user_id != user_id:
            raise NotFound(f"Could not find application credential: {credential_id}.")
        return credential

    def delete_app_credential(self, caller: Caller, user_id: str, credential_id: str) -> None:
        credential = self.get_app_credential(caller, user_id, credential_id)
        if caller.app_credential is not None and not caller.app_credential.unrestricted:
            raise forbidden("delete_application_credential")
        self.store.delete_app_credential(credential.id)
        self._changed()

    def role_names(self, role_ids: Iterable[str]) -> list[Role]:
        roles = {r.id: r for r in self.store.roles()}
        return [roles[i] for i in role_ids if i in roles]

    def names(self) -> dict[str, str]:
        """Every project, user and role id with its name (``include_names``)."""
        found = {p.id: p.name for p in self.store.projects()}
        found.update({u.id: u.name for u in self.store.users()})
        found.update({r.id: r.name for r in self.store.roles()})
        return found

    # -- bootstrap -----------------------------------------------------------------------------

    def bootstrap(self, admin_password: str, project: str = "admin", user: str = "admin") -> User:
        """``keystone-manage bootstrap``: the default roles, the admin project and user with the
        admin role on it and on the system. An existing admin keeps their password."""
        self.store.install()
        roles = {r.name: r for r in self.store.roles()}
        for name in DEFAULT_ROLES:
            if name not in roles:
                roles[name] = _created(
                    partial(self.store.create_role, name), partial(self.store.find_role, name)
                )
        admin_project = self.store.find_project(project) or _created(
            lambda: self.store.create_project(project, description="Bootstrap project"),
            lambda: self.store.find_project(project),
        )
        admin = self.store.find_user(user) or _created(
            lambda: self.store.create_user(
                user, password=admin_password, default_project_id=admin_project.id
            ),
            lambda: self.store.find_user(user),
        )
        self.store.grant(admin.id, admin_project.id, roles[ADMIN_ROLE].id)
        self.store.grant(admin.id, SYSTEM_TARGET, roles[ADMIN_ROLE].id)
        return admin


def _earliest(first: datetime.datetime | None, second: datetime.datetime) -> datetime.datetime:
    return second if first is None else min(first, second)


def _admin(caller: Caller, action: str) -> None:
    if not caller.is_admin:
        raise forbidden(action)


def _known_domain(domain_id: str) -> None:
    if domain_id != DEFAULT_DOMAIN_ID:
        raise NotFound(f"Could not find domain: {domain_id}.")


def _no_assignment(role_id: str, user_id: str, target_id: str) -> NotFound:
    return NotFound(
        f"Could not find role assignment with role: {role_id}, user or group: {user_id}, "
        f"project, domain, or system: {target_id}."
    )


def _stored(action: Callable[[], T]) -> T:
    """Run a store call, answering its errors as Keystone does (404, 409)."""
    try:
        return action()
    except IdentityNotFound as exc:
        raise NotFound(str(exc)) from exc
    except IdentityConflict as exc:
        raise Conflict(str(exc)) from exc


def _created(create: Callable[[], T], find: Callable[[], T | None]) -> T:
    """Create, or take what another process created meanwhile."""
    try:
        return create()
    except IdentityConflict:
        found = find()
        if found is None:
            raise
        return found
