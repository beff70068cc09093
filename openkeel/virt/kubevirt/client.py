"""Kubernetes REST I/O for the KubeVirt driver: a small typed client over httpx.

Called by openkeel.virt.kubevirt.driver (and its watch module, the test simulator and the
benchmark). Objects are plain JSON dicts; every resource the driver touches is a
:class:`Resource` constant here. Errors are :class:`KubeError` subclasses by HTTP status.
``update`` is the read-modify-write loop that retries on resourceVersion conflicts.
See docs/decisions for why this is not the ``kubernetes`` package.
"""

from __future__ import annotations

import builtins
import copy
import os
import ssl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import yaml

JsonObj = dict[str, Any]
Mutator = Callable[[JsonObj], bool | None]

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Resource:
    """One REST collection: API group/version, plural name, kind, scope."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None, sub: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
        return f"{base}/{sub}" if sub else base


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
SECRETS = Resource("", "v1", "secrets", "Secret")
PODS = Resource("", "v1", "pods", "Pod")
VMS = Resource("kubevirt.io", "v1", "virtualmachines", "VirtualMachine")
VMIS = Resource("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance")
MIGRATIONS = Resource(
    "kubevirt.io", "v1", "virtualmachineinstancemigrations", "VirtualMachineInstanceMigration"
)
VM_SNAPSHOTS = Resource(
    "snapshot.kubevirt.io", "v1beta1", "virtualmachinesnapshots", "VirtualMachineSnapshot"
)
DATA_VOLUMES = Resource("cdi.kubevirt.io", "v1beta1", "datavolumes", "DataVolume")


class KubeError(Exception):
    """The API server refused a request (or could not be reached: status 0)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class NotFoundError(KubeError):
    pass


class ConflictError(KubeError):
    """409: resourceVersion conflict (reason Conflict) or AlreadyExists."""

    @property
    def already_exists(self) -> bool:
        return self.reason == "AlreadyExists"


class GoneError(KubeError):
    """410: the resourceVersion asked for is too old (watch must relist)."""


def error_from(status: int, body: bytes) -> KubeError:
    try:
        data = orjson.loads(body)
        reason, message = str(data.get("reason", "")), str(data.get("message", ""))
    except (orjson.JSONDecodeError, AttributeError):
        reason, message = "", body.decode(errors="replace")[:500]
    cls = {404: NotFoundError, 409: ConflictError, 410: GoneError}.get(status, KubeError)
    return cls(status, reason, message)


@dataclass(frozen=True)
class KubeConfig:
    """Where the API server is and how to authenticate."""

    server: str
    token: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    namespace: str = "default"

    @classmethod
    def load(cls, path: str | None) -> KubeConfig:
        """From a kubeconfig file (current context), or in-cluster when ``path`` is empty."""
        if not path:
            return cls.in_cluster()
        doc = yaml.safe_load(Path(path).read_text())
        current = doc.get("current-context")
        context = _named(doc.get("contexts", []), current, "context")
        cluster = _named(doc.get("clusters", []), context.get("cluster"), "cluster")
        user = _named(doc.get("users", []), context.get("user"), "user")
        base = Path(path).parent
        return cls(
            server=str(cluster["server"]).rstrip("/"),
            token=user.get("token"),
            ca_file=_relative(base, cluster.get("certificate-authority")),
            cert_file=_relative(base, user.get("client-certificate")),
            key_file=_relative(base, user.get("client-key")),
            namespace=context.get("namespace", "default"),
        )

    @classmethod
    def in_cluster(cls) -> KubeConfig:
        host = os.environ.get("KUBERNETES_SERVICE_HOST", "kubernetes.default.svc")
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        return cls(
            server=f"https://{host}:{port}",
            token=(SERVICE_ACCOUNT / "token").read_text().strip(),
            ca_file=str(SERVICE_ACCOUNT / "ca.crt"),
        )


def _named(entries: list[JsonObj], name: object, key: str) -> JsonObj:
    for entry in entries:
        if entry.get("name") == name:
            found: JsonObj = entry.get(key) or {}
            return found
    raise KubeError(0, "BadConfig", f"kubeconfig has no {key} named {name!r}")


def _relative(base: Path, value: str | None) -> str | None:
    return None if not value else str(base / value)


_IDEMPOTENT = frozenset({"GET", "PUT", "DELETE", "HEAD"})


class KubeClient:
    """Thread-safe (httpx connection pool) JSON client of one API server."""

    def __init__(self, config: KubeConfig, timeout: float = 30.0) -> None:
        self.config = config
        verify: ssl.SSLContext | bool = True
        if config.ca_file:
            verify = ssl.create_default_context(cafile=config.ca_file)
        if config.cert_file and config.key_file and isinstance(verify, ssl.SSLContext):
            verify.load_cert_chain(config.cert_file, config.key_file)
        headers = {"Accept": "application/json"}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        self._http = httpx.Client(
            base_url=config.server,
            verify=verify,
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
        )

    def close(self) -> None:
        self._http.close()

    # --- plumbing ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> JsonObj:
        content = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if content is not None else None
        attempts = 2 if method in _IDEMPOTENT else 1
        for attempt in range(attempts):
            try:
                resp = self._http.request(
                    method, path, content=content, params=params, headers=headers
                )
                break
            except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
                # A kept-alive connection the server (or a TLS hiccup) broke: a fresh
                # connection usually works; only requests safe to repeat are repeated.
                if attempt + 1 == attempts:
                    raise KubeError(0, "Unreachable", f"{method} {path}: {exc}") from exc
            except httpx.HTTPError as exc:
                raise KubeError(0, "Unreachable", f"{method} {path}: {exc}") from exc
        if resp.status_code >= 400:
            raise error_from(resp.status_code, resp.content)
        if not resp.content:
            return {}
        result: JsonObj = orjson.loads(resp.content)
        return result

    def get_text(self, path: str, params: dict[str, str] | None = None) -> str | None:
        """A plain-text GET (pod logs); None when the server answers an error."""
        try:
            resp = self._http.get(path, params=params, headers={"Accept": "*/*"})
        except httpx.HTTPError as exc:
            raise KubeError(0, "Unreachable", f"GET {path}: {exc}") from exc
        return resp.text if resp.status_code == 200 else None

    def ready(self) -> bool:
        """True if the server answers /readyz."""
        try:
            return self._http.get("/readyz", timeout=3.0).status_code == 200
        except httpx.HTTPError:
            return False

    # --- CRUD --------------------------------------------------------------------------------

    def get(self, res: Resource, name: str, namespace: str | None = None) -> JsonObj:
        return self.request("GET", res.path(namespace, name))

    def get_or_none(self, res: Resource, name: str, namespace: str | None = None) -> JsonObj | None:
        try:
            return self.get(res, name, namespace)
        except NotFoundError:
            return None

    def list(
        self, res: Resource, namespace: str | None = None, label_selector: str | None = None
    ) -> JsonObj:
        """The list object (``items`` and ``metadata.resourceVersion``)."""
        params = {"labelSelector": label_selector} if label_selector else None
        return self.request("GET", res.path(namespace), params=params)

    def items(
        self, res: Resource, namespace: str | None = None, label_selector: str | None = None
    ) -> builtins.list[JsonObj]:
        found: builtins.list[JsonObj] = self.list(res, namespace, label_selector).get("items", [])
        return found

    def create(self, res: Resource, obj: JsonObj, namespace: str | None = None) -> JsonObj:
        ns = namespace if namespace is not None else obj.get("metadata", {}).get("namespace")
        body = {"apiVersion": res.api_version, "kind": res.kind, **obj}
        return self.request("POST", res.path(ns), body)

    def replace(self, res: Resource, obj: JsonObj, sub: str = "") -> JsonObj:
        meta = obj["metadata"]
        return self.request("PUT", res.path(meta.get("namespace"), meta["name"], sub), obj)

    def patch(
        self,
        res: Resource,
        name: str,
        patch: object,
        namespace: str | None = None,
        sub: str = "",
        patch_type: str = "merge",
    ) -> JsonObj:
        """Merge patch (default) or JSON patch (``patch_type="json"``)."""
        ctype = f"application/{patch_type}-patch+json"
        return self.request("PATCH", res.path(namespace, name, sub), patch, content_type=ctype)

    def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        propagation: str | None = None,
    ) -> bool:
        """Delete one object; False if it was already gone."""
        body = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            body["propagationPolicy"] = propagation
        try:
            self.request("DELETE", res.path(namespace, name), body)
        except NotFoundError:
            return False
        return True

    def update(
        self,
        res: Resource,
        name: str,
        mutate: Mutator,
        namespace: str | None = None,
        sub: str = "",
        attempts: int = 20,
    ) -> JsonObj:
        """Read, ``mutate`` a copy in place, write back with its resourceVersion; on a 409
        conflict read again and retry. ``mutate`` returning False means nothing to write."""
        for _ in range(attempts):
            current = self.get(res, name, namespace)
            wanted = copy.deepcopy(current)
            if mutate(wanted) is False or wanted == current:
                return current
            try:
                return self.replace(res, wanted, sub)
            except ConflictError as exc:
                if exc.already_exists:
                    raise
        raise ConflictError(409, "Conflict", f"{res.kind} {name}: too many concurrent updates")

    def ensure(self, res: Resource, obj: JsonObj, namespace: str | None = None) -> JsonObj:
        """Create ``obj`` unless an object of that name exists; return what is stored."""
        ns = namespace if namespace is not None else obj.get("metadata", {}).get("namespace")
        try:
            return self.create(res, obj, ns)
        except ConflictError as exc:
            if not exc.already_exists:
                raise
            return self.get(res, obj["metadata"]["name"], ns)

    def ensure_namespace(self, name: str, labels: dict[str, str] | None = None) -> JsonObj:
        return self.ensure(NAMESPACES, {"metadata": {"name": name, "labels": labels or {}}})

    # --- watch -------------------------------------------------------------------------------

    @contextmanager
    def watch(
        self,
        res: Resource,
        resource_version: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> Iterator[Iterator[JsonObj]]:
        """Stream watch events from ``resource_version`` (with bookmarks) until the server
        ends the stream; a 410 comes as GoneError (HTTP status or ERROR event)."""
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        if label_selector:
            params["labelSelector"] = label_selector
        timeout = httpx.Timeout(10.0, read=timeout_seconds + 30.0)
        with self._http.stream("GET", res.path(namespace), params=params, timeout=timeout) as resp:
            if resp.status_code >= 400:
                raise error_from(resp.status_code, resp.read())
            yield _events(resp)


def _events(resp: httpx.Response) -> Iterator[JsonObj]:
    for line in resp.iter_lines():
        if not line.strip():
            continue
        event: JsonObj = orjson.loads(line)
        if event.get("type") == "ERROR":
            status = event.get("object", {})
            code = int(status.get("code", 500))
            raise error_from(code, orjson.dumps(status))
        yield event
