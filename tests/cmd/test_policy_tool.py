"""``openkeel policy check / list / sample``: nova-policy's output and exit codes, and a sample
file laid out exactly as oslopolicy-sample-generator lays it out."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from oslo_policy import generator

from openkeel.api.policy import rule_defaults
from openkeel.cmd.main import main

Capture = pytest.CaptureFixture[str]


def policy(*args: str) -> int:
    return main(["policy", "--config-file", "/dev/null", *args])


def test_check_lists_the_rules_a_member_passes(capsys: Capture) -> None:
    member = ("--os-roles", "member,reader", "--os-user-id", "u1", "--os-tenant-id", "p1")
    assert policy(*member, "policy", "check", "--api-name", "os-keypairs") == 0
    allowed = capsys.readouterr().out.splitlines()
    assert "os_compute_api:os-keypairs:create" in allowed
    assert all("os-keypairs" in rule for rule in allowed)
    assert policy(*member, "policy", "check", "--api-name", "os-aggregates") == 1
    assert capsys.readouterr().out == "No rules matched or allowed\n"


def test_check_against_a_target(capsys: Capture) -> None:
    member = ("--os-roles", "member,reader", "--os-user-id", "u1", "--os-tenant-id", "p1")
    check = ("policy", "check", "--api-name", "servers:show")
    assert policy(*member, *check, "--target", "project_id=p1") == 0
    assert "os_compute_api:servers:show\n" in capsys.readouterr().out
    assert policy(*member, *check, "--target", "project_id=other") == 1
    capsys.readouterr()
    assert policy(*member, *check, "--target", "flavor=1") == 1
    assert capsys.readouterr().out == "error: Attribute not supported: flavor\n"


def test_admin_passes_admin_rules(capsys: Capture) -> None:
    admin = ("--os-roles", "admin", "--os-user-id", "a", "--os-tenant-id", "p")
    assert policy(*admin, "policy", "check", "--api-name", "os-aggregates:create") == 0
    assert capsys.readouterr().out == "os_compute_api:os-aggregates:create\n"


def test_list_prints_every_rule(capsys: Capture) -> None:
    assert policy("policy", "list") == 0
    names = capsys.readouterr().out.splitlines()
    assert names == [rule.name for rule in rule_defaults()]
    assert policy("policy", "list", "--api-name", "os-hypervisors") == 0
    assert all("os-hypervisors" in n for n in capsys.readouterr().out.splitlines())


def test_sample_comments_every_rule_as_the_sample_generator_does(tmp_path: Path) -> None:
    out = tmp_path / "policy.yaml"
    assert policy("policy", "sample", "--output-file", str(out)) == 0
    text = out.read_text()
    rules = rule_defaults()
    oracle = "".join(generator._format_rule_default_yaml(rule) for rule in rules)
    assert text == oracle
    assert yaml.safe_load(text) is None  # every rule commented out
    uncommented = "\n".join(
        line[1:] if line.startswith('#"') else line for line in text.splitlines()
    )
    assert yaml.safe_load(uncommented) == {rule.name: rule.check_str for rule in rules}


def test_unknown_action_is_an_argument_error() -> None:
    assert policy("policy", "nonsense") == 2
