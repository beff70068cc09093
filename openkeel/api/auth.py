"""Authentication: turn request headers into a RequestContext, or refuse with 401.

Two strategies behind one protocol: ``NoAuth`` for the embedded default (token ``user:project``)
and ``openkeel.api.keystone.KeystoneAuth`` for real deployments.
"""

from __future__ import annotations

from typing import Protocol

from openkeel.api.context import RequestContext
from openkeel.domain.errors import Unauthorized

ADMIN_ROLES = ("admin", "member", "reader")
USER_ROLES = ("member", "reader")


class Authenticator(Protocol):
    """Builds the caller's context from the request headers (lower-cased names)."""

    def authenticate(self, headers: dict[str, str], request_id: str) -> RequestContext:
        """Return the context; raise :class:`Unauthorized` when credentials are bad.

        May block (network I/O): the app calls it on a worker thread."""
        ...

    def authenticate_cached(
        self, headers: dict[str, str], request_id: str
    ) -> RequestContext | None:
        """The context when it can be had without I/O, else None (then ``authenticate``)."""
        ...


class NoAuth:
    """Trusting authentication for the embedded default and tests.

    ``X-Auth-Token: <user>:<project>`` (project defaults to ``X-Auth-Project-Id``, then to the
    user). User ``admin`` gets admin, member and reader; others member and reader, unless
    ``X-Roles`` says otherwise. No token, or the keystoneauth ``none`` plugin's placeholder
    ``notused``, means ``admin:admin``: the CLI's ``auth_type: none`` then just works.
    """

    def authenticate_cached(
        self, headers: dict[str, str], request_id: str
    ) -> RequestContext | None:
        """NoAuth never does I/O: always answers here."""
        return self.authenticate(headers, request_id)

    def authenticate(self, headers: dict[str, str], request_id: str) -> RequestContext:
        token = headers.get("x-auth-token", "").strip()
        if token in ("", "notused"):
            token = "admin:admin"
        user, sep, project = token.partition(":")
        if not user:
            raise Unauthorized("The request you have made requires authentication.")
        if not sep or not project:
            project = headers.get("x-auth-project-id", "") or user
        roles_header = headers.get("x-roles")
        if roles_header:
            roles = tuple(r.strip() for r in roles_header.split(",") if r.strip())
        else:
            roles = ADMIN_ROLES if user == "admin" else USER_ROLES
        return RequestContext(
            user_id=user, project_id=project, roles=roles, request_id=request_id, auth_token=token
        )
