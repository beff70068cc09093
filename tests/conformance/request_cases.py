"""Generates request bodies and query strings to feed both Nova's validators and ours.

Read by test_request_schemas.py. Starting from known-valid bodies (Nova's request samples and a
few hand-written ones), it walks Nova's schema and yields variants: each property set to values
of every JSON type and a few edge strings, each required property removed, an unknown property
added, at every object level of the body. Query cases try each declared parameter with typical
good and bad values, repeated values and an unknown parameter.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

PALETTE: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1,
    1.5,
    "",
    "x",
    " x",
    "x ",
    "1",
    "-1",
    "1.5",
    "true",
    "a" * 256,
    "ab:cd",
    "8f1fb1b6-4b8a-4c4b-a55c-8e2a1b9f5f1c",
    [],
    ["x"],
    {},
    {"a": "b"},
)
QUERY_VALUES: tuple[list[str], ...] = (
    ["1"],
    ["0"],
    ["-1"],
    ["abc"],
    [""],
    ["true"],
    ["False"],
    ["1.5"],
    ["1", "2"],
    ["a" * 300],
    ["8f1fb1b6-4b8a-4c4b-a55c-8e2a1b9f5f1c"],
)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = dict(schema.get("properties", {}))
    for branch in schema.get("oneOf", []) + schema.get("anyOf", []):
        props.update(branch.get("properties", {}))
    return props


def _set(body: Any, path: tuple[str, ...], value: Any, delete: bool = False) -> Any:
    mutated = copy.deepcopy(body)
    target = mutated
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return mutated


def body_variants(schema: dict[str, Any], base: Any) -> Iterator[tuple[str, Any]]:
    """``(description, body)`` pairs derived from the valid ``base``."""
    yield "valid base", base
    wholes: tuple[Any, ...] = (None, {}, [], "x")
    for whole in wholes:
        yield f"body={whole!r}", whole
    yield from _object_variants(schema, base, base, ())


def _object_variants(
    schema: dict[str, Any], root: Any, node: Any, path: tuple[str, ...]
) -> Iterator[tuple[str, Any]]:
    if not isinstance(node, dict) or len(path) > 3:
        return
    where = "/".join(path) or "<root>"
    yield f"{where}: unknown property", _set(root, (*path, "zz_unknown"), "x")
    yield f"{where}: odd key", _set(root, (*path, "bad key!"), "x")
    for key in schema.get("required", []):
        if key in node:
            yield f"{where}: without {key}", _set(root, (*path, key), None, delete=True)
    for key, sub in _properties(schema).items():
        for value in PALETTE:
            yield f"{where}/{key}={value!r:.40}", _set(root, (*path, key), value)
        if isinstance(node.get(key), dict) and isinstance(sub, dict):
            yield from _object_variants(sub, root, node[key], (*path, key))


def query_variants(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, list[str]]]]:
    """``(description, query dict of lists)`` pairs for a query schema."""
    yield "no parameters", {}
    yield "unknown parameter", {"zz_unknown": ["1"]}
    for key in _properties(schema):
        for values in QUERY_VALUES:
            yield f"{key}={values!r:.40}", {key: values}
