"""Validate generated objects against KubeVirt 1.9 / CDI 1.66 OpenAPI schemas, strictly.

The swagger files in /work/shared/spec/{kubevirt,cdi}/ are OpenAPI v2 documents whose
``definitions`` refer to each other with ``$ref: "#/definitions/<name>"``; the two documents use
the same short names for different types (``v1.ResourceRequirements`` is KubeVirt's in one and
core Kubernetes' in the other), so each document resolves its own refs. The CRD files carry the
structural ``openAPIV3Schema`` the API server prunes with; objects are checked against both.

Unknown fields are errors (a real API server would prune them silently), as are names that are
not DNS-1123 and invalid label keys/values. Core ``v1/Secret`` is not in either document: a
small schema for it is written here from the Kubernetes API reference.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

SPEC = Path("/work/shared/spec")
_KINDS = {
    "VirtualMachine": ("kubevirt", "v1.VirtualMachine", "virtualmachines.kubevirt.io"),
    "VirtualMachineClusterInstancetype": (
        "kubevirt",
        "v1beta1.VirtualMachineClusterInstancetype",
        "virtualmachineclusterinstancetypes.instancetype.kubevirt.io",
    ),
    "DataVolume": ("cdi", "v1beta1.DataVolume", "datavolumes.cdi.kubevirt.io"),
    "DataSource": ("cdi", "v1beta1.DataSource", "datasources.cdi.kubevirt.io"),
    "Secret": ("kubevirt", "core.v1.Secret", None),
}
_SECRET = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata"],
    "properties": {
        "apiVersion": {"type": "string", "enum": ["v1"]},
        "kind": {"type": "string", "enum": ["Secret"]},
        "metadata": {"$ref": "#/definitions/k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "type": {"type": "string"},
        "immutable": {"type": "boolean"},
        "data": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
        "stringData": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_API_VERSIONS = {
    "VirtualMachine": "kubevirt.io/v1",
    "VirtualMachineClusterInstancetype": "instancetype.kubevirt.io/v1beta1",
    "DataVolume": "cdi.kubevirt.io/v1beta1",
    "DataSource": "cdi.kubevirt.io/v1beta1",
    "Secret": "v1",
}


@cache
def definitions(document: str) -> dict[str, Any]:
    """The ``definitions`` of a swagger document (plus the hand-written core Secret)."""
    loaded: dict[str, Any] = json.loads((SPEC / document / "swagger.json").read_text())
    defs = dict(loaded["definitions"])
    defs["core.v1.Secret"] = _SECRET
    return defs


@cache
def crd_schema(crd: str, version: str) -> dict[str, Any]:
    """The structural openAPIV3Schema of one CRD version."""
    folder = "cdi" if crd.endswith("cdi.kubevirt.io") else "kubevirt"
    document = yaml.safe_load((SPEC / folder / "crds" / f"{crd}.yaml").read_text())
    served = next(v for v in document["spec"]["versions"] if v["name"] == version)
    schema: dict[str, Any] = served["schema"]["openAPIV3Schema"]
    return schema


class _Checker:
    """One validation run: walks instance and schema together, collecting errors."""

    def __init__(self, defs: dict[str, Any], crd: bool) -> None:
        self.defs = defs
        self.crd = crd
        self.errors: list[str] = []

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            name = schema["$ref"].removeprefix("#/definitions/")
            if name not in self.defs:
                raise KeyError(f"unresolvable $ref {schema['$ref']}")
            schema = self.defs[name]
        return schema

    def check(self, value: Any, schema: dict[str, Any], path: str) -> None:
        schema = self.resolve(schema)
        if not self._type_ok(value, schema, path):
            return
        if "enum" in schema and value not in schema["enum"]:
            self.errors.append(f"{path}: {value!r} not in {schema['enum']}")
        if isinstance(value, dict):
            self._object(value, schema, path)
        elif isinstance(value, list) and "items" in schema:
            for index, item in enumerate(value):
                self.check(item, schema["items"], f"{path}[{index}]")
        elif isinstance(value, str):
            self._string(value, schema, path)
        elif isinstance(value, int) and not isinstance(value, bool):
            self._integer(value, schema, path)

    def _type_ok(self, value: Any, schema: dict[str, Any], path: str) -> bool:
        if schema.get("x-kubernetes-int-or-string"):
            ok = isinstance(value, (int, str)) and not isinstance(value, bool)
            expected: Any = "int-or-string"
        else:
            expected = schema.get("type")
            if expected is None:
                return True
            types = expected if isinstance(expected, list) else [expected]
            ok = any(_is_type(value, t) for t in types)
        if value is None and schema.get("nullable"):
            return False
        if not ok:
            self.errors.append(f"{path}: expected {expected}, got {type(value).__name__}")
        return ok

    def _object(self, value: dict[str, Any], schema: dict[str, Any], path: str) -> None:
        for name in schema.get("required", []):
            if name not in value:
                self.errors.append(f"{path}: missing required field {name!r}")
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        if self.crd and path == "$.metadata":
            return  # the API server validates ObjectMeta itself (checked via swagger)
        for key, item in value.items():
            if properties is not None and key in properties:
                self.check(item, properties[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                self.check(item, extra, f"{path}.{key}")
            elif extra is not True:
                self.errors.append(f"{path}: unknown field {key!r}")

    def _string(self, value: str, schema: dict[str, Any], path: str) -> None:
        if schema.get("format") == "byte":
            try:
                base64.b64decode(value, validate=True)
            except binascii.Error:
                self.errors.append(f"{path}: not base64")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            self.errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            self.errors.append(f"{path}: longer than {schema['maxLength']}")

    def _integer(self, value: int, schema: dict[str, Any], path: str) -> None:
        limit = {"int32": 2**31, "int64": 2**63}.get(schema.get("format", ""))
        if limit is not None and not -limit <= value < limit:
            self.errors.append(f"{path}: {value} out of {schema['format']} range")
        if "minimum" in schema and value < schema["minimum"]:
            self.errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            self.errors.append(f"{path}: {value} > maximum {schema['maximum']}")


def _is_type(value: Any, name: str) -> bool:
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    }
    return bool(checks[name](value))


def _metadata_errors(obj: dict[str, Any]) -> list[str]:
    errors = []
    meta = obj.get("metadata", {})
    name, namespace = meta.get("name", ""), meta.get("namespace")
    if not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
        errors.append(f"$.metadata.name: {name!r} is not a DNS-1123 subdomain")
    if obj.get("kind") == "VirtualMachine" and len(name) > 63:
        errors.append(f"$.metadata.name: {name!r} too long for a VM (label value)")
    if namespace is not None and (not _DNS_LABEL.match(namespace) or len(namespace) > 63):
        errors.append(f"$.metadata.namespace: {namespace!r} is not a DNS-1123 label")
    labels = dict(meta.get("labels", {}))
    spec = obj.get("spec", {})
    labels.update(spec.get("template", {}).get("metadata", {}).get("labels", {}))
    for key, value in labels.items():
        if not _LABEL_VALUE.match(value) or len(value) > 63:
            errors.append(f"label {key}: invalid value {value!r}")
        prefix, _, short = key.rpartition("/")
        if (prefix and not _DNS_SUBDOMAIN.match(prefix)) or not _LABEL_VALUE.match(short):
            errors.append(f"label key {key!r} is invalid")
    return errors


def validate(obj: dict[str, Any]) -> list[str]:
    """Every problem found in ``obj`` (empty when it would be accepted unchanged)."""
    kind = obj.get("kind", "")
    if kind not in _KINDS:
        return [f"no schema for kind {kind!r}"]
    if obj.get("apiVersion") != _API_VERSIONS[kind]:
        return [f"apiVersion {obj.get('apiVersion')!r} is not {_API_VERSIONS[kind]!r}"]
    document, definition, crd = _KINDS[kind]
    checker = _Checker(definitions(document), crd=False)
    checker.check(obj, checker.defs[definition], "$")
    errors = [f"swagger {e}" for e in checker.errors]
    if crd is not None:
        crd_checker = _Checker({}, crd=True)
        crd_checker.check(obj, crd_schema(crd, obj["apiVersion"].rpartition("/")[2]), "$")
        errors += [f"crd {e}" for e in crd_checker.errors]
    return errors + _metadata_errors(obj)
