"""Validation of flavor extra specs against the keys Nova knows (microversion 2.86+).

``validate(key, value)`` is called by the flavor use cases for each extra spec a create or
update sets. Unknown keys outside the known namespaces pass (operators use their own);
unknown keys inside a known namespace and bad values of known keys are 400s, as in Nova.
"""

from __future__ import annotations

import re

from openkeel.domain.extra_specs.catalog import RULES
from openkeel.domain.extra_specs.rules import ExtraSpecRule, rejected

_BY_NAME: dict[str, ExtraSpecRule] = {}
for _rule in RULES:
    _BY_NAME.setdefault(_rule.name, _rule)
_NAMESPACES = tuple(
    re.compile(ns) for ns in dict.fromkeys(r.namespace for r in RULES) if ns is not None
)


def find_rule(key: str) -> ExtraSpecRule | None:
    """The rule that decides about ``key``: by exact name, else the first whose pattern
    matches."""
    rule = _BY_NAME.get(key)
    if rule is not None:
        return rule
    return next((r for r in RULES if r.covers(key)), None)


def validate(key: str, value: str) -> None:
    """Raise Invalid (400) with Nova's message when ``key: value`` is not acceptable."""
    rule = find_rule(key)
    if rule is not None:
        rule.check(value)
        return
    namespace, colon, _rest = key.partition(":")
    if colon and any(ns.fullmatch(namespace) for ns in _NAMESPACES):
        raise rejected(f"extra spec '{key}' does not appear to be a valid extra spec.")


__all__ = ["ExtraSpecRule", "find_rule", "validate"]
