"""``openkeel policy`` (nova-policy, plus oslo.policy's list and sample tools):

- ``policy check [--api-name NAME] [--target KEY=VALUE ...]``: the rules the caller
  (``--os-roles``, ``--os-user-id``, ``--os-tenant-id``; env ``OS_ROLES`` ...) passes, one per
  line, exit 0; ``No rules matched or allowed`` and exit 1 when none; ``error: ...`` and exit 1
  for a bad target. ``instance_id=<uuid>`` targets that server's project and user.
- ``policy list [--api-name NAME]``: every rule name (the defaults, which the policy file may
  override).
- ``policy sample [--output-file PATH]``: a policy.yaml with every default rule commented
  out, described as oslopolicy-sample-generator describes it.

The rules are the compute API's (``openkeel.api.policy``) under ``[oslo_policy]``.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from openkeel.api.context import RequestContext
from openkeel.api.policy import PolicyEnforcer, rule_defaults
from openkeel.db.engine import make_engine
from openkeel.db.schema import cell as cell_schema

ACCEPTABLE_TARGETS = ("project_id", "user_id", "quota_class", "availability_zone", "instance_id")


class InvalidTarget(Exception):
    """A ``--target`` nova-policy does not accept, or an unknown instance."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``policy`` action; its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    conf = cfg.ConfigOpts()
    conf.register_cli_opts(
        [
            cfg.ListOpt("os-roles", metavar="<auth-roles>", default=os.environ.get("OS_ROLES"),
                        help="Defaults to env[OS_ROLES]."),
            cfg.StrOpt("os-user-id", metavar="<auth-user-id>",
                       default=os.environ.get("OS_USER_ID"), help="Defaults to env[OS_USER_ID]."),
            cfg.StrOpt("os-tenant-id", metavar="<auth-tenant-id>",
                       default=os.environ.get("OS_TENANT_ID"),
                       help="Defaults to env[OS_TENANT_ID]."),
        ]
    )  # fmt: skip
    conf.register_opts([cfg.StrOpt("connection", secret=True)], group="database")
    conf.register_cli_opt(
        cfg.SubCommandOpt("category", title="Command categories", handler=_add_categories)
    )
    policy_opts.set_defaults(conf)
    try:
        conf(args, project="nova", prog="nova-policy", default_config_files=[])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    try:
        action: str = conf.category.action
        if action == "check":
            return _check(conf)
        if action == "list":
            return _list(conf)
        return _sample(conf)
    except Exception as exc:
        print(f"error: {exc}")
        return 1


def _add_categories(subparsers: Any) -> None:
    actions = subparsers.add_parser("policy").add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", help="Prints all passing policy rules for the user.")
    check.add_argument("--api-name", dest="api_name", metavar="<name>",
                       help="Only the passing rules whose name contains this.")  # fmt: skip
    check.add_argument("--target", nargs="+", dest="target", metavar="<target>",
                       help="KEY=VALUE targets: " + ", ".join(ACCEPTABLE_TARGETS))  # fmt: skip
    listing = actions.add_parser("list", help="Prints every policy rule name.")
    listing.add_argument("--api-name", dest="api_name", metavar="<name>",
                         help="Only the rules whose name contains this.")  # fmt: skip
    sample = actions.add_parser("sample", help="Writes a sample policy.yaml (all commented).")
    sample.add_argument("--output-file", dest="output_file", metavar="<path>",
                        help="Where to write it (default: standard output).")  # fmt: skip


def _check(conf: cfg.ConfigOpts) -> int:
    context = RequestContext(
        user_id=conf.os_user_id,
        project_id=conf.os_tenant_id,
        roles=tuple(conf.os_roles or ()),
        enforcer=PolicyEnforcer(conf),
    )
    target = _target(conf, conf.category.target)
    api_name = conf.category.api_name or ""
    allowed = [
        rule.name
        for rule in rule_defaults()
        if api_name in rule.name and context.can(rule.name, target, fatal=False)
    ]
    if not allowed:
        print("No rules matched or allowed")
        return 1
    print("\n".join(allowed))
    return 0


def _target(conf: cfg.ConfigOpts, pairs: list[str] | None) -> dict[str, Any] | None:
    if not pairs:
        return None
    target: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in ACCEPTABLE_TARGETS:
            raise InvalidTarget(f"Attribute not supported: {key}")
        target[key] = value
    if target.get("instance_id"):
        return _instance_owner(conf, target["instance_id"])
    return target


def _instance_owner(conf: cfg.ConfigOpts, uuid: str) -> dict[str, Any]:
    instances = cell_schema.instances
    engine = make_engine(conf.database.connection)
    try:
        with engine.connect() as connection:
            row = connection.execute(
                sa.select(instances.c.user_id, instances.c.project_id).where(
                    instances.c.uuid == uuid
                )
            ).first()
    finally:
        engine.dispose()
    if row is None:
        raise InvalidTarget(f"Instance {uuid} could not be found.")
    return {"user_id": row.user_id, "project_id": row.project_id}


def _list(conf: cfg.ConfigOpts) -> int:
    api_name = conf.category.api_name or ""
    print("\n".join(rule.name for rule in rule_defaults() if api_name in rule.name))
    return 0


def _sample(conf: cfg.ConfigOpts) -> int:
    text = sample_policy(rule_defaults())
    if conf.category.output_file:
        with open(conf.category.output_file, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


def sample_policy(rules: Sequence[oslo_policy.RuleDefault]) -> str:
    """A policy.yaml in oslopolicy-sample-generator's layout: for each rule its description,
    operations and intended scopes as comments, then the rule itself commented out."""
    return "".join(_sample_entry(rule) for rule in rules)


def _sample_entry(rule: oslo_policy.RuleDefault) -> str:
    lines: list[str] = []
    if rule.description:
        # Wrapped at 70 columns, as the sample generator does.
        lines += textwrap.wrap(
            " ".join(rule.description.split()), 70, initial_indent="# ", subsequent_indent="# "
        )
    for operation in getattr(rule, "operations", None) or ():
        lines.append(f"# {operation['method']}  {operation['path']}")
    if rule.scope_types:
        lines.append(f"# Intended scope(s): {', '.join(rule.scope_types)}")
    lines.append(f'#"{rule.name}": "{rule.check_str}"')
    return "\n".join(lines) + "\n\n"
