"""Values derived from a route's JSON schema: a valid example, and the hostile values to put
in place of each property.

Used by tests/fuzz/cases.py. Deterministic: nothing here draws random numbers. A valid value
for a leaf schema is the first of a fixed pool that the schema (with Nova's format checkers)
accepts, so patterns and formats need no regex sampler.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from openkeel.api.validation import Schema

UUID = "a3b1c2d4-0000-4000-8000-00000000f022"
# Tried in order for a leaf schema; the first one it accepts is its example.
POOL: tuple[Any, ...] = (
    "fuzz1",
    "1",
    1,
    True,
    "true",
    UUID,
    "2026-01-01T00:00:00Z",
    "10.0.0.1",
    "::1",
    "10.0.0.0/24",
    "/10.0.0.0",
    "aGVsbG8=",
    "shared",
    "",
    None,
    [],
    {},
)

# What a hostile client puts in place of a property (each in turn).
HOSTILE: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    -(2**63),
    2**64,
    1.5,
    1e308,
    "",
    " ",
    "x" * 256,
    "x" * 70000,
    "\u2603\U0001f600\u00e9\u202e",
    "\x00",
    "%00",
    "(((",
    "[",
    "-1",
    "99999999999999999999999",
    "1e999",
    "NaN",
    [],
    [None],
    ["x" * 256],
    {},
    {"": None},
    {"x" * 300: "y"},
)


def _subschema_with(schema: dict[str, Any], branch: dict[str, Any]) -> dict[str, Any]:
    merged = {k: val for k, val in schema.items() if k not in ("oneOf", "anyOf")}
    merged.update(branch)
    return merged


def accepts(schema: dict[str, Any], value: Any) -> bool:
    """True when ``value`` is valid for ``schema`` (Nova's validator and format checkers)."""
    return next(Schema(schema).errors(value), None) is None


def example(schema: dict[str, Any]) -> Any:
    """A value valid for ``schema`` (None when none is found: the caller skips it)."""
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, ()):
            candidate = example(_subschema_with(schema, branch))
            if candidate is not None and accepts(schema, candidate):
                return candidate
    types = schema.get("type")
    kinds = types if isinstance(types, list) else [types]
    if "object" in kinds or "properties" in schema:
        return _object_example(schema)
    if "array" in kinds:
        return _array_example(schema)
    for value in POOL:
        if accepts(schema, value):
            return value
    return None


def _object_example(schema: dict[str, Any]) -> Any:
    built: dict[str, Any] = {}
    props = schema.get("properties", {})
    for name in schema.get("required", ()):
        built[name] = example(props.get(name, {}))
    if not props and schema.get("patternProperties"):
        pattern_schema = next(iter(schema["patternProperties"].values()))
        built["fuzz1"] = example(pattern_schema)
    return built if accepts(schema, built) else None


def _array_example(schema: dict[str, Any]) -> Any:
    items = schema.get("items")
    if isinstance(items, dict) and schema.get("minItems", 0) > 0:
        item = example(items)
        return [item]
    return []


def property_paths(
    schema: dict[str, Any], prefix: tuple[str, ...] = (), depth: int = 4
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every property (path, schema) of ``schema``'s objects, nested ones included, and for
    an array of objects the properties of its first item (path element ``"0"``)."""
    if depth == 0:
        return
    for branch in (schema, *schema.get("oneOf", ()), *schema.get("anyOf", ())):
        for name, sub in branch.get("properties", {}).items():
            yield (*prefix, name), sub
            yield from property_paths(sub, (*prefix, name), depth - 1)
        items = branch.get("items")
        if isinstance(items, dict) and items.get("properties"):
            yield from property_paths(items, (*prefix, "0"), depth - 1)


def put(body: Any, path: tuple[str, ...], value: Any, delete: bool = False) -> Any:
    """A copy of ``body`` with ``value`` at ``path`` (parents made as needed), or with the key
    at ``path`` removed when ``delete``."""
    result = copy.deepcopy(body) if body is not None else {}
    node = result
    for step in path[:-1]:
        if step == "0":
            if not isinstance(node, list) or not node:
                return result
            child = node[0]
        else:
            if not isinstance(node, dict):
                return result
            child = node.get(step)
            if not isinstance(child, dict | list):
                child = node[step] = [{}] if _next_is_index(path, step) else {}
        node = child
    last = path[-1]
    if last == "0":
        if isinstance(node, list):
            if delete:
                node.clear()
            elif node:
                node[0] = value
            else:
                node.append(value)
        return result
    if isinstance(node, dict):
        if delete:
            node.pop(last, None)
        else:
            node[last] = value
    return result


def _next_is_index(path: tuple[str, ...], step: str) -> bool:
    index = path.index(step)
    return index + 1 < len(path) and path[index + 1] == "0"
