"""Parser of Nova's route inventory (shared/spec/api-routes.md) for meta-tests.

Reads the markdown tables of §1 (routes), §2 (body actions), §3 (schema files per operation),
§4 (query schemas) and §5 (policy rules) into frozen rows. Used by the route inventory
meta-test and by any test that wants Nova's windows, statuses, schema names or policy defaults.
The spec is found in ``$OPENKEEL_SPEC_DIR``, else ``<repo>/../shared/spec``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_PLACEHOLDER = re.compile(r"\{[^}]*\}")
_REMOVED = re.compile(r"^410 \(removed ([\d.]+)\)$")
_LEADING_INT = re.compile(r"^(\d+)")


def spec_dir() -> Path:
    """The folder holding api-routes.md."""
    env = os.environ.get("OPENKEEL_SPEC_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "spec"


def normalise(template: str) -> str:
    """``/servers/{server_id}/tags/{id}`` -> ``/servers/{}/tags/{}`` (names differ across code)."""
    return _PLACEHOLDER.sub("{}", template)


def _cell(text: str) -> str:
    return text.strip().strip("`").strip()


def _version(text: str) -> str | None:
    text = _cell(text)
    return None if text in ("—", "(per action)", "") else text


def _status(success: str) -> int | None:
    """The success code: ``200``, ``410 (removed 22.0.0)`` -> 410; ``none: ...`` -> None."""
    found = _LEADING_INT.match(success.strip())
    return int(found.group(1)) if found else None


def status_windows(success: str) -> list[tuple[int, str | None, str | None]]:
    """The success codes of a row with their microversion windows.

    ``200`` -> [(200, None, None)]; ``200 (2.1-2.100); 202 (2.101-2.104)`` (en dashes in the
    spec) -> two windowed entries; ``201 (added) / 204 (already present)`` -> two unwindowed alternatives.
    """
    found = []
    for part in re.split(r"[;/]", success):
        code = _LEADING_INT.match(part.strip())
        if code is None:
            continue
        window = re.search(r"\((\d+\.\d+)–(\d+\.\d+)\)", part)
        low, high = (window.group(1), window.group(2)) if window else (None, None)
        found.append((int(code.group(1)), low, high))
    return found


def _rules(text: str) -> tuple[str, ...]:
    return tuple(_cell(part) for part in text.split(";") if _cell(part) not in ("", "—"))


@dataclass(frozen=True)
class RouteRow:
    """One row of §1: a method on a path template."""

    number: int
    method: str
    path: str
    controller: str
    min_version: str | None
    max_version: str | None
    success: str
    errors: str
    policies: tuple[str, ...]
    notes: str

    @property
    def status(self) -> int | None:
        """The success status code (410 for removed APIs), None when the cell has no code."""
        return _status(self.success)

    @property
    def removed_in(self) -> str | None:
        """The Nova release that removed this API (410 at every version), or None."""
        found = _REMOVED.match(self.success.strip())
        return found.group(1) if found else None

    @property
    def removed(self) -> bool:
        """True for always-410 rows."""
        return self.removed_in is not None

    @property
    def is_action_dispatch(self) -> bool:
        """True for the ``POST …/action`` rows whose details live in §2."""
        return self.min_version is None and "(per action)" in self.success

    @property
    def key(self) -> tuple[str, str]:
        """(method, normalised path) for comparison with the route table."""
        return self.method, normalise(self.path)


@dataclass(frozen=True)
class ActionRow:
    """One row of §2: a body key on an ``…/action`` route."""

    number: int
    path: str
    action: str
    controller: str
    min_version: str | None
    max_version: str | None
    success: str
    errors: str
    policies: tuple[str, ...]
    schemas: str

    @property
    def status(self) -> int | None:
        """The success status code, None when the action never succeeds (os-getRDPConsole)."""
        return _status(self.success)

    @property
    def removed_in(self) -> str | None:
        """The Nova release that removed this action (410 at every version), or None."""
        found = _REMOVED.match(self.success.strip())
        return found.group(1) if found else None

    @property
    def removed(self) -> bool:
        """True for always-410 actions."""
        return self.removed_in is not None

    @property
    def flagged_removed(self) -> bool:
        """True for removed actions, including os-getRDPConsole (flagged but still windowed)."""
        return self.removed or "marked removed" in self.success

    @property
    def key(self) -> tuple[str, str]:
        """(normalised path, body key)."""
        return normalise(self.path), self.action


@dataclass(frozen=True)
class SchemaRow:
    """One row of §3: the schema files of one operation."""

    method: str
    target: str
    body: str
    query: str
    response: str


@dataclass(frozen=True)
class QuerySchemaRow:
    """One row of §4: a query schema, its range, strictness and parameters."""

    schema: str
    range: str
    additional_properties: bool
    parameters: str
    used_by: tuple[str, ...]


@dataclass(frozen=True)
class PolicyRow:
    """One row of §5: a policy rule, its default check string and operations."""

    rule: str
    check: str
    operations: str


def _sections(text: str) -> dict[str, list[list[str]]]:
    """Table rows (cells, header and separator dropped) under each ``## N.`` heading."""
    sections: dict[str, list[list[str]]] = {}
    current: list[list[str]] | None = None
    for line in text.splitlines():
        heading = re.match(r"^## (\d+)\.", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
            continue
        if line.startswith("## "):
            current = None
        if current is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in _split_row(line)]
        if set("".join(cells)) <= set("-: "):
            continue
        current.append(cells)
    # The first row under each heading is the table header.
    return {name: rows[1:] for name, rows in sections.items()}


def _split_row(line: str) -> list[str]:
    # Cells never contain escaped pipes in this file; backticked text has none either.
    return line.strip().strip("|").split("|")


@cache
def _tables() -> dict[str, list[list[str]]]:
    return _sections((spec_dir() / "api-routes.md").read_text(encoding="utf-8"))


def routes() -> list[RouteRow]:
    """Every §1 row (209 in Nova 34)."""
    return [
        RouteRow(
            int(c[0]), c[1], _cell(c[2]), c[3], _version(c[4]), _version(c[5]), c[6], c[7],
            _rules(c[8]), c[9],
        )
        for c in _tables()["1"]
    ]  # fmt: skip


def actions() -> list[ActionRow]:
    """Every §2 row (64 in Nova 34)."""
    return [
        ActionRow(
            int(c[0]), _cell(c[1]), _cell(c[2]), c[3], _version(c[4]), _version(c[5]), c[6],
            c[7], _rules(c[8]), c[9],
        )
        for c in _tables()["2"]
    ]  # fmt: skip


def schema_rows() -> list[SchemaRow]:
    """Every §3 row: request body, query and response schema names per operation."""
    return [SchemaRow(c[0], _cell(c[1]), c[2], c[3], c[4]) for c in _tables()["3"]]


def query_schema_rows() -> list[QuerySchemaRow]:
    """Every §4 row (171 in Nova 34)."""
    return [
        QuerySchemaRow(
            _cell(c[0]), c[1], c[2] == "True", c[3], tuple(u.strip() for u in c[4].split(";"))
        )
        for c in _tables()["4"]
    ]


def policy_rows() -> list[PolicyRow]:
    """Every §5 row (203 API rules in Nova 34)."""
    return [PolicyRow(_cell(c[0]), _cell(c[1]), c[2]) for c in _tables()["5"]]
