"""Policy enforcement through oslo.policy with Nova's 203 API rules as defaults.

One enforcer per app, built from the typed settings (policy file from ``[oslo_policy]``).
oslo.policy re-reads its configuration on every check; here the rules are loaded once, the
policy file is re-read only when its modification time changes (looked at once a second at
most), and decisions are cached per (rule, target, caller) until the rules change.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from oslo_policy import policy as oslo_policy

from openkeel.api.policy_defaults import API_RULES, BASE_RULES
from openkeel.domain.errors import PolicyNotAuthorized

if TYPE_CHECKING:
    from oslo_config import cfg

    from openkeel.api.context import RequestContext

_CACHE_LIMIT = 8192
_RECHECK_SECONDS = 1.0


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


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


class PolicyEnforcer:
    """Checks rules for request contexts; wraps one oslo.policy Enforcer."""

    def __init__(self, conf: cfg.ConfigOpts, recheck_seconds: float = _RECHECK_SECONDS) -> None:
        self._recheck_seconds = recheck_seconds
        self._enforcer = oslo_policy.Enforcer(conf, use_conf=True)
        self._enforcer.register_defaults(rule_defaults())
        self._lock = threading.Lock()
        self._decisions: dict[tuple[Any, ...], bool] = {}
        self._next_check = 0.0
        self._stamp: tuple[float, ...] = ()
        self._reload()

    def _files(self) -> list[str]:
        paths = [self._enforcer.policy_path] if self._enforcer.policy_path else []
        return [*paths, *getattr(self._enforcer, "_policy_dir_mtimes", {}).keys()]

    def _reload(self) -> None:
        self._enforcer.use_conf = True
        self._enforcer.load_rules(force_reload=True)
        self._enforcer.use_conf = False
        self._stamp = self._mtimes()
        self._decisions.clear()

    def _mtimes(self) -> tuple[float, ...]:
        stamps = []
        for path in self._files():
            try:
                stamps.append(os.stat(path).st_mtime)
            except OSError:
                stamps.append(-1.0)
        return tuple(stamps)

    def _refresh(self) -> None:
        now = time.monotonic()
        if now < self._next_check:
            return
        with self._lock:
            self._next_check = now + self._recheck_seconds
            if self._mtimes() != self._stamp:
                self._reload()

    def _decide(self, rule: str, target: dict[str, Any], creds: dict[str, Any]) -> bool:
        self._refresh()
        key = (rule, _freeze(target), _freeze(creds))
        found = self._decisions.get(key)
        if found is not None:
            return found
        try:
            allowed = bool(self._enforcer.authorize(rule, target, creds, do_raise=False))
        except oslo_policy.InvalidScope:
            allowed = False
        if len(self._decisions) >= _CACHE_LIMIT:
            self._decisions.clear()
        self._decisions[key] = allowed
        return allowed

    def authorize(
        self, context: RequestContext, rule: str, target: dict[str, Any], fatal: bool = True
    ) -> bool:
        """True when allowed; raise PolicyNotAuthorized (403) when denied and ``fatal``."""
        allowed = self._decide(rule, target, context.policy_values())
        if not allowed and fatal:
            raise PolicyNotAuthorized(rule)
        return allowed

    def check_is_admin(self, context: RequestContext) -> bool:
        """Evaluate ``context_is_admin`` for the caller (no target needed)."""
        creds = context.policy_values()
        return self._decide("context_is_admin", creds, creds)
