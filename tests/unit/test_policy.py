"""The policy enforcer: Nova's defaults, policy file overrides, reload on change, caching."""

from __future__ import annotations

import os
from pathlib import Path

from openkeel.api.context import RequestContext
from openkeel.api.policy import PolicyEnforcer
from openkeel.conf import make_config

RULE = "os_compute_api:os-flavor-manage:create"


def _member() -> RequestContext:
    return RequestContext(user_id="u", project_id="p", roles=("member", "reader"))


def _admin() -> RequestContext:
    return RequestContext(user_id="a", project_id="p", roles=("admin", "member", "reader"))


def test_defaults_admin_only_rule() -> None:
    enforcer = PolicyEnforcer(make_config())
    assert enforcer.authorize(_admin(), RULE, {}, fatal=False)
    assert not enforcer.authorize(_member(), RULE, {}, fatal=False)
    assert enforcer.check_is_admin(_admin()) and not enforcer.check_is_admin(_member())


def test_project_scoped_reader_rule_uses_target() -> None:
    enforcer = PolicyEnforcer(make_config())
    rule = "os_compute_api:os-quota-sets:show"
    assert enforcer.authorize(_member(), rule, {"project_id": "p"}, fatal=False)
    assert not enforcer.authorize(_member(), rule, {"project_id": "other"}, fatal=False)


def test_policy_file_override_and_reload(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(f'"{RULE}": "role:member"\n')
    conf = make_config(overrides={"oslo_policy.policy_file": str(policy)})
    enforcer = PolicyEnforcer(conf, recheck_seconds=0)
    assert enforcer.authorize(_member(), RULE, {}, fatal=False)
    policy.write_text(f'"{RULE}": "!"\n')
    stat = policy.stat()
    os.utime(policy, (stat.st_atime, stat.st_mtime + 10))
    assert not enforcer.authorize(_member(), RULE, {}, fatal=False)
    assert not enforcer.authorize(_admin(), RULE, {}, fatal=False)
