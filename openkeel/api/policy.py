"""Policy enforcement through oslo.policy with Nova's 203 API rules as defaults.

One enforcer per app, built from the typed settings (policy file from ``[oslo_policy]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_policy import policy as oslo_policy

from openkeel.api.policy_defaults import API_RULES, BASE_RULES
from openkeel.domain.errors import PolicyNotAuthorized

if TYPE_CHECKING:
    from oslo_config import cfg

    from openkeel.api.context import RequestContext


def rule_defaults() -> list[oslo_policy.RuleDefault]:
    """Every default rule, base aliases first, as oslo.policy objects."""
    rules: list[oslo_policy.RuleDefault] = [
        oslo_policy.RuleDefault(name, check) for name, check in BASE_RULES
    ]
    for name, check, operations in API_RULES:
        ops: list[Any] = []
        for op in operations.split("; "):
            method, _, path = op.partition(" ")
            ops.append({"method": method, "path": path})
        rules.append(
            oslo_policy.DocumentedRuleDefault(
                name=name,
                check_str=check,
                description=f"Compute API: {operations}",
                operations=ops,
                scope_types=["project"],
            )
        )
    return rules


class PolicyEnforcer:
    """Checks rules for request contexts; wraps one oslo.policy Enforcer."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self._enforcer = oslo_policy.Enforcer(conf, use_conf=True)
        self._enforcer.register_defaults(rule_defaults())
        self._enforcer.load_rules()

    def authorize(
        self, context: RequestContext, rule: str, target: dict[str, Any], fatal: bool = True
    ) -> bool:
        """True when allowed; raise PolicyNotAuthorized (403) when denied and ``fatal``."""
        try:
            allowed = bool(
                self._enforcer.authorize(rule, target, context.policy_values(), do_raise=False)
            )
        except oslo_policy.InvalidScope:
            allowed = False
        if not allowed and fatal:
            raise PolicyNotAuthorized(rule)
        return allowed

    def check_is_admin(self, context: RequestContext) -> bool:
        """Evaluate ``context_is_admin`` for the caller (no target needed)."""
        creds = context.policy_values()
        return bool(self._enforcer.enforce("context_is_admin", creds, creds, do_raise=False))
