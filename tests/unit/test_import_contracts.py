"""The import contracts of pyproject.toml ([tool.importlinter], run by scripts/test.sh) hold for
the tree, and each one fails when a module breaks it: a copy of the package gets one offending
import per contract and ``lint-imports`` must name that contract and exit non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

# contract id -> (module to write or extend, the offending import)
VIOLATIONS = {
    "layers": ("domain/leak.py", "import openkeel.api.request"),
    "roles": ("conductor/leak.py", "import openkeel.compute.service"),
    "adapters-without-db": ("virt/leak.py", "import openkeel.db.engine"),
    "handlers-through-usecases": ("api/resources/leak.py", "import openkeel.rpc.clients.compute"),
    "compute-driver-interface": ("compute/leak.py", "import openkeel.virt.fake"),
    "manifest-rules-acyclic": (
        "virt/kubevirt/manifests/extra_specs.py",
        "import openkeel.virt.kubevirt.manifests.resolution",
    ),
}

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "openkeel", tmp_path / "openkeel", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize("contract", sorted(VIOLATIONS))
def test_an_offending_import_breaks_its_contract(tree: Path, contract: str) -> None:
    module, line = VIOLATIONS[contract]
    path = tree / "openkeel" / module
    before = path.read_text() if path.exists() else '"""A deliberate violation."""\n'
    path.write_text(before + f"\n{line}  # noqa\n")
    result = _lint(tree)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [row for row in result.stdout.splitlines() if " BROKEN" in row]
    assert any(_name(contract) in row for row in broken), result.stdout


def _name(contract: str) -> str:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for entry in config["tool"]["importlinter"]["contracts"]:
        if entry["id"] == contract:
            return str(entry["name"])
    raise AssertionError(f"no contract {contract}")
