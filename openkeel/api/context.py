"""The typed request context: who is calling, in which project, with which roles.

Built by the auth layer (noauth or Keystone) for every request and passed to handlers and use
cases. ``can`` checks a policy rule through the enforcer the app was built with.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openkeel.api.policy import PolicyEnforcer


def new_request_id() -> str:
    """A request id in Nova's format: ``req-<uuid4>``."""
    return f"req-{uuid.uuid4()}"


@dataclass
class RequestContext:
    """The caller of one request."""

    user_id: str | None
    project_id: str | None
    roles: tuple[str, ...] = ()
    request_id: str = field(default_factory=new_request_id)
    auth_token: str | None = None
    system_scope: str | None = None
    domain_id: str | None = None
    user_domain_id: str | None = None
    project_domain_id: str | None = None
    service_catalog: tuple[dict[str, Any], ...] = ()
    enforcer: PolicyEnforcer | None = field(default=None, repr=False, compare=False)

    @property
    def is_admin(self) -> bool:
        """True when the ``context_is_admin`` rule passes (Nova's ``context.is_admin``)."""
        if self.enforcer is None:
            return "admin" in self.roles
        return self.enforcer.check_is_admin(self)

    def policy_values(self) -> dict[str, Any]:
        """The credentials dict that oslo.policy checks rules against."""
        return {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "roles": list(self.roles),
            "system_scope": self.system_scope,
            "domain_id": self.domain_id,
            "user_domain_id": self.user_domain_id,
            "project_domain_id": self.project_domain_id,
            "is_admin_project": True,
            "service_user_id": None,
            "service_roles": [],
        }

    def can(self, rule: str, target: dict[str, Any] | None = None, fatal: bool = True) -> bool:
        """Check ``rule``; raise PolicyNotAuthorized when denied and ``fatal``.

        The default target is the caller's own project and user, as in Nova.
        """
        if self.enforcer is None:
            raise RuntimeError("RequestContext has no policy enforcer")
        if target is None:
            target = {"project_id": self.project_id, "user_id": self.user_id}
        return self.enforcer.authorize(self, rule, target, fatal=fatal)
