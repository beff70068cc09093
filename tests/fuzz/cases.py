"""The requests sent to one route at one microversion, derived from its schemas.

Kinds of case: the valid seed body and schema-derived valid variants (each optional property
given a valid value); each property replaced by each hostile value, each required key
removed, an extra key added at each level; the whole body replaced; malformed JSON; wrong
content types; bad path ids; odd query strings (each parameter given hostile text, repeated
keys, unknown keys). A fixed budget per route and version is drawn from these with a
``random.Random`` seeded by the route's name and version, so every run sends the same requests.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from openkeel.api.microversion import MAX_VERSION, APIVersion
from openkeel.api.validation import Schema
from tests.fuzz import seeds, values
from tests.fuzz.targets import LEGACY, Target
from tests.fuzz.world import World

BUDGET = 24  # mutated requests per route and microversion (seeds and variants come on top)
LATEST_BUDGET = 64  # at the newest version, where most clients live
MALFORMED: tuple[bytes, ...] = (
    b"{",
    b"[",
    b"null",
    b"1",
    b'"x"',
    b"\xff\xfe\x00",
    b'{"a": 1}{',
    b"{'a': 1}",
    b"[" * 5000 + b"]" * 5000,
    b'{"a": NaN}',
    b'{"a": 1e99999}',
    b'{"a": 1, "a": 2}',
    b'{"\\ud800": 1}',
)
CONTENT_TYPES = (
    "text/plain",
    "application/xml",
    "multipart/form-data; boundary=x",
    "application/json; charset=utf-16",
    "a/b/c",
    "\u00e9/json",
)
BAD_IDS = (
    "not-a-uuid",
    "x" * 300,
    "x" * 5000,
    "\u2603\U0001f600",
    "%00",
    "%2500",
    "-1",
    "0",
    "99999999999999999999999",
    "1.5",
    "\u00b2",
    "\u0661\u0662",
    "%20",
    "(((",
    "..",
)
QUERY_TEXTS = (
    "",
    "(((",
    "[",
    "-1",
    "0",
    "99999999999999999999999",
    "x" * 5000,
    "\u2603",
    "\x00",
    "None",
    "true",
    "2026-13-45T99:99:99",
    values.UUID,
)
QUERY_COMMON = ("limit", "marker", "sort_key", "sort_dir", "changes-since", "name", "all_tenants")


@dataclass
class Call:
    """One request: everything ``ApiClient.request`` needs, and what it tests."""

    label: str
    method: str
    path: str
    version: str
    body: bytes | None = None
    content_type: str | None = "application/json"
    query: list[tuple[str, str]] = field(default_factory=list)
    valid: bool = False

    def url(self) -> str:
        mount = "/v2" if self.version == LEGACY else "/v2.1"
        return mount + self.path

    def headers(self) -> dict[str, bytes]:
        """Header values as bytes: a hostile content type need not be ASCII."""
        found = {"X-Auth-Token": b"admin:admin"}
        if self.version != LEGACY:
            found["OpenStack-API-Version"] = f"compute {self.version}".encode()
        if self.content_type is not None and self.body is not None:
            found["Content-Type"] = self.content_type.encode()
        return found

    def reproducer(self) -> str:
        body = (self.body or b"")[:300]
        query = "&".join(f"{k}={v[:40]}" for k, v in self.query)
        return (
            f"{self.method} {self.url()[:200]}{'?' + query if query else ''} "
            f"[{self.version}] ctype={self.content_type} body={body!r}"
        )


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _parsed(version: str) -> APIVersion:
    if version == "latest":
        return MAX_VERSION
    if version == LEGACY:
        return APIVersion(2, 0)
    major, minor = version.split(".")
    return APIVersion(int(major), int(minor))


def schema_at(target: Target, version: str, kind: str) -> Schema | None:
    """The body (``kind="body"``) or query schema of ``target`` at ``version``."""
    versioned = target.endpoint.body if kind == "body" else target.endpoint.query
    return versioned.at(_parsed(version)) if versioned is not None else None


def seed_body(world: World, target: Target, version: str) -> Any:
    """The first candidate body the schema accepts (the first one when there is no schema)."""
    found = seeds.candidates(world, target.method, target.template, target.action)
    schema = schema_at(target, version, "body")
    for candidate in found:
        inner = candidate.get(target.action) if target.action else candidate
        if schema is None or next(schema.errors(inner), None) is None:
            return candidate
    return found[0] if found else None


def build(world: World, target: Target, version: str) -> list[Call]:
    """Every request for ``target`` at ``version``: valid ones last, a budget of the rest."""
    path = world.path(target.method, target.template, _parsed(version))
    seed = seed_body(world, target, version)
    base = Call("seed", target.method, path, version, _body_bytes(target, seed))
    mutated = [
        *_body_cases(target, version, base, seed),
        *_raw_cases(target, base, seed),
        *_path_cases(world, target, base),
        *_query_cases(target, version, base),
    ]
    rng = random.Random(f"{target.name}@{version}")
    budget = LATEST_BUDGET if version == "latest" else BUDGET
    chosen = rng.sample(mutated, min(budget, len(mutated)))
    valid = [base, *_valid_variants(target, version, base, seed)]
    for call in valid:
        call.valid = True
    return chosen + valid


def _body_bytes(target: Target, seed: Any) -> bytes | None:
    if target.method not in ("POST", "PUT"):
        return None
    return _encode(seed)


def _wrap(target: Target, inner: Any) -> Any:
    return {target.action: inner} if target.action else inner


def _unwrap(target: Target, seed: Any) -> Any:
    if target.action and isinstance(seed, dict):
        return seed.get(target.action)
    return seed


def _with_body(base: Call, label: str, target: Target, inner: Any) -> Call:
    body = _encode(_wrap(target, inner))
    return Call(label, base.method, base.path, base.version, body, base.content_type)


def _body_cases(target: Target, version: str, base: Call, seed: Any) -> list[Call]:
    if target.method not in ("POST", "PUT"):
        return []
    inner = _unwrap(target, seed)
    found = [_with_body(base, f"whole body {v!r:.30}", target, v) for v in values.HOSTILE]
    schema = schema_at(target, version, "body")
    if schema is None:
        return found
    for path, sub in values.property_paths(schema.schema):
        where = "/".join(path)
        for value in values.HOSTILE:
            changed = values.put(inner, path, value)
            found.append(_with_body(base, f"{where}={value!r:.30}", target, changed))
        removed = values.put(inner, path, None, delete=True)
        found.append(_with_body(base, f"without {where}", target, removed))
        if sub.get("type") == "object" or "properties" in sub:
            extra = values.put(inner, (*path, "fuzz_extra"), 1)
            found.append(_with_body(base, f"{where}/fuzz_extra", target, extra))
    if isinstance(inner, dict):
        found.append(_with_body(base, "top fuzz_extra", target, {**inner, "fuzz_extra": 1}))
    return found


def _valid_variants(target: Target, version: str, base: Call, seed: Any) -> list[Call]:
    """The seed plus one optional property at a time, given a value its schema accepts."""
    schema = schema_at(target, version, "body")
    if schema is None or target.method not in ("POST", "PUT"):
        return []
    inner = _unwrap(target, seed)
    found = []
    for path, sub in values.property_paths(schema.schema, depth=2):
        value = values.example(sub)
        if value is None:
            continue
        changed = values.put(inner, path, value)
        if changed != inner and next(schema.errors(changed), None) is None:
            found.append(_with_body(base, f"valid {'/'.join(path)}={value!r:.30}", target, changed))
    return found[:12]


def _raw_cases(target: Target, base: Call, seed: Any) -> list[Call]:
    if target.method not in ("POST", "PUT"):
        return []
    found = [
        Call(f"malformed {raw[:20]!r}", base.method, base.path, base.version, raw)
        for raw in MALFORMED
    ]
    body = base.body or _encode(seed)
    for ctype in CONTENT_TYPES:
        found.append(Call(f"ctype {ctype}", base.method, base.path, base.version, body, ctype))
    found.append(Call("no body", base.method, base.path, base.version, None))
    return found


def _path_cases(world: World, target: Target, base: Call) -> list[Call]:
    found = []
    template = target.template
    placeholders = [seg for seg in template.split("/") if seg.startswith("{")]
    for index, _name in enumerate(placeholders):
        for bad in BAD_IDS:
            path = _replace_nth(base.path, template, index, bad)
            found.append(
                Call(f"path id {index}={bad[:20]!r}", base.method, path, base.version, base.body)
            )
    return found


def _replace_nth(path: str, template: str, index: int, value: str) -> str:
    """``path`` with the segment of the ``index``-th placeholder of ``template`` replaced."""
    segs, tsegs = path.split("/"), template.split("/")
    positions = [i for i, seg in enumerate(tsegs) if seg.startswith("{")]
    if len(segs) != len(tsegs):
        return path
    segs[positions[index]] = value
    return "/".join(segs)


def _query_cases(target: Target, version: str, base: Call) -> list[Call]:
    schema = schema_at(target, version, "query")
    names = list(schema.schema.get("properties", {})) if schema is not None else []
    names += [n for n in QUERY_COMMON if n not in names]
    found = []
    for name in names:
        for text in QUERY_TEXTS:
            query = [(name, text)]
            found.append(Call(f"?{name}={text[:20]!r}", base.method, base.path, version, base.body))
            found[-1].query = query
        repeated = Call(f"?{name} twice", base.method, base.path, version, base.body)
        repeated.query = [(name, "1"), (name, "(((")]
        found.append(repeated)
    unknown = Call("?unknown", base.method, base.path, version, base.body)
    unknown.query = [("fuzz_unknown", "1"), ("", "x")]
    found.append(unknown)
    return found
