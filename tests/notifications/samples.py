"""Nova 34.0.0's notification samples (``<spec>/nova-notification-samples``) as test oracles.

``sample(name)`` loads one with its ``$ref``s resolved as Nova's own sample tests do (the
referenced file, then the referring object's other keys merged in recursively).
``assert_matches(message, name)`` checks a sent notification against it: the event type, the
priority, the publisher's binary, and the payload's shape, recursively: the same
``nova_object`` name, namespace and version, the same data keys, and values of the sample's
JSON type (a null on either side matches anything: it is the value of that run, not the type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.spec_inventory import spec_dir


def samples_dir() -> Path:
    return spec_dir() / "nova-notification-samples"


def _merge(base: Any, update: Any) -> Any:
    if isinstance(base, dict) and isinstance(update, dict):
        merged = dict(base)
        for key, value in update.items():
            merged[key] = _merge(base.get(key), value) if key in base else value
        return merged
    return update


def _resolve(value: Any, here: Path) -> Any:
    if isinstance(value, dict):
        if "$ref" in value:
            target = here / value["$ref"].split("#")[0]
            loaded = _resolve(json.loads(target.read_text()), target.parent)
            rest = {k: _resolve(v, here) for k, v in value.items() if k != "$ref"}
            return _merge(loaded, rest)
        return {k: _resolve(v, here) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, here) for v in value]
    return value


def sample(name: str) -> dict[str, Any]:
    """The sample ``<name>.json`` with every ``$ref`` resolved."""
    path = samples_dir() / f"{name}.json"
    resolved: dict[str, Any] = _resolve(json.loads(path.read_text()), path.parent)
    return resolved


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def shape_errors(got: Any, want: Any, where: str = "payload") -> list[str]:
    """How ``got`` differs in shape from the sample value ``want`` (empty: it matches)."""
    if got is None or want is None:
        return []
    if _kind(got) != _kind(want):
        return [f"{where}: {_kind(got)} where the sample has {_kind(want)}"]
    if isinstance(want, float) and not isinstance(got, float):
        return [f"{where}: integer where the sample has a float"]
    if isinstance(want, list):
        errors: list[str] = []
        if want:
            for i, item in enumerate(got):
                errors += shape_errors(item, want[0], f"{where}[{i}]")
        return errors
    if isinstance(want, dict):
        if "nova_object.name" in want:
            errors = [
                f"{where}.{key}: {got.get(key)!r} != {want[key]!r}"
                for key in ("nova_object.name", "nova_object.namespace", "nova_object.version")
                if got.get(key) != want[key]
            ]
            sparse = want["nova_object.name"] in SPARSE
            return errors + _data_errors(got.get("nova_object.data"), want["nova_object.data"], where, sparse)  # fmt: skip
        return []  # free-form dicts (metadata, extra specs, rules)
    return []


# Objects whose data holds only the fields that are set (Nova's ImageMetaPropsPayload: the
# image's own properties), so their keys differ from run to run.
SPARSE = {"ImageMetaPropsPayload"}


def _data_errors(got: Any, want: Mapping[str, Any], where: str, sparse: bool = False) -> list[str]:
    if not isinstance(got, dict):
        return [f"{where}: no nova_object.data"]
    errors = []
    missing, extra = set(want) - set(got), set(got) - set(want)
    if sparse:
        missing = extra = set()
    if missing:
        errors.append(f"{where}: missing {sorted(missing)}")
    if extra:
        errors.append(f"{where}: not in the sample {sorted(extra)}")
    for key in set(want) & set(got):
        errors += shape_errors(got[key], want[key], f"{where}.{key}")
    return errors


# Sent by every service (the sample shows nova-api's; compute's come from nova-compute).
ANY_PUBLISHER = {"compute.exception"}


def assert_matches(message: Mapping[str, Any], name: str) -> None:
    """A sent notification message against the sample ``name``."""
    want = sample(name)
    assert message["event_type"] == want["event_type"]
    assert message["priority"] == want["priority"]
    binary = message["publisher_id"].split(":")[0]
    if message["event_type"] in ANY_PUBLISHER:
        assert binary.startswith("nova-")
    else:
        assert binary == want["publisher_id"].split(":")[0]
    errors = shape_errors(message["payload"], want["payload"])
    assert not errors, "\n".join(errors)
