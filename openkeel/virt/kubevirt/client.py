"""Kubernetes REST I/O for the KubeVirt driver: a small typed client over httpx.

Called by openkeel.virt.kubevirt.driver (and its watch module, the test simulator and the
benchmark). Objects are plain JSON dicts; every resource the driver touches is a
:class:`Resource` constant here. Errors are :class:`KubeError` subclasses by HTTP status.
``update`` is the read-modify-write loop that retries on resourceVersion conflicts.
See docs/decisions for why this is not the ``kubernetes`` package.

Connections and threads: plain requests share one pool, which lends each connection to one
request at a time. A watch holds a connection of its own (:class:`WatchStream`), opened, read
and closed by the thread that iterates it; any other thread may only ``abort()`` it, which shuts
the socket down (the reader sees end of stream) without freeing its file descriptor. A socket's
descriptor is only ever closed by its owner, so no thread can find its descriptor number reused
by another socket or file under it. ``close()`` is idempotent and ordered: it refuses new
requests, aborts the watches, waits for requests in flight and only then closes the pool.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import logging
import socket
import ssl
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from openkeel.virt.kubevirt import kubeconfig
from openkeel.virt.kubevirt.kubeconfig import Credentials

LOG = logging.getLogger(__name__)

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
PVCS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
PVS = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
VMS = Resource("kubevirt.io", "v1", "virtualmachines", "VirtualMachine")
VMIS = Resource("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance")
MIGRATIONS = Resource(
    "kubevirt.io", "v1", "virtualmachineinstancemigrations", "VirtualMachineInstanceMigration"
)
VM_SNAPSHOTS = Resource(
    "snapshot.kubevirt.io", "v1beta1", "virtualmachinesnapshots", "VirtualMachineSnapshot"
)
# KubeVirt >= 1.1 serves export.kubevirt.io v1beta1 (v1 from 1.9 on, the same schema).
VM_EXPORTS = Resource("export.kubevirt.io", "v1beta1", "virtualmachineexports", "VirtualMachineExport")  # fmt: skip
DATA_VOLUMES = Resource("cdi.kubevirt.io", "v1beta1", "datavolumes", "DataVolume")
DATA_SOURCES = Resource("cdi.kubevirt.io", "v1beta1", "datasources", "DataSource")
NETWORK_POLICIES = Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")


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


class ClosedError(KubeError):
    """The client was closed: no new requests or watches."""

    def __init__(self, what: str) -> None:
        super().__init__(0, "Closed", f"{what}: the Kubernetes client is closed")


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
    """Where the API server is and how to authenticate (``load`` reads a kubeconfig with
    the ``kubernetes`` package's loader; see kubeconfig.py)."""

    server: str
    token: str | None = None  # a fixed bearer token (tests, simple setups)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    namespace: str = "default"
    verify: bool = True  # False: insecure-skip-tls-verify
    tls_server_name: str | None = None  # the name the server certificate is checked for
    proxy: str | None = None  # proxy-url
    # Refreshing credentials (token files, exec plugins, auth providers, in-cluster token).
    credentials: Credentials | None = field(default=None, compare=False, repr=False)

    @classmethod
    def load(cls, path: str | None, context: str | None = None) -> KubeConfig:
        """From a kubeconfig file or a ``KUBECONFIG``-style list of files (``context``, else
        the current one), or in-cluster when ``path`` is empty."""
        try:
            loaded, credentials, namespace = kubeconfig.load(path, context, SERVICE_ACCOUNT)
        except kubeconfig.ConfigError as exc:
            raise KubeError(0, "BadConfig", str(exc)) from exc
        return cls(
            server=str(loaded.host).rstrip("/"),
            ca_file=loaded.ssl_ca_cert,
            cert_file=loaded.cert_file,
            key_file=loaded.key_file,
            namespace=namespace,
            verify=bool(loaded.verify_ssl),
            tls_server_name=loaded.tls_server_name,
            proxy=loaded.proxy,
            credentials=credentials,
        )

    @classmethod
    def in_cluster(cls) -> KubeConfig:
        return cls.load(None)


class _RefreshingAuth(httpx.Auth):
    """The current Authorization header on every request; after a 401 the credentials are
    loaded again (a rotated token, an expired exec credential) and the request sent once more."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        header = self.credentials.header()
        if header:
            request.headers["Authorization"] = header
        response = yield request
        if response.status_code == 401:
            self.credentials.reload()
            fresh = self.credentials.header()
            if fresh and fresh != header:
                request.headers["Authorization"] = fresh
                yield request


_IDEMPOTENT = frozenset({"GET", "PUT", "DELETE", "HEAD"})
CLOSE_TIMEOUT = 10.0  # how long close() waits for requests in flight and watches


def shutdown_socket(sock: socket.socket | None) -> None:
    """Wake any thread blocked on ``sock`` (it reads end of stream) without closing it: the
    descriptor stays the owner's until it closes it, so it cannot be reused meanwhile. Only
    the TCP level is touched (no TLS state is shared with the reading thread)."""
    if sock is None:
        return
    with contextlib.suppress(OSError):  # already closed or not connected
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class WatchStream:
    """One watch's own connection and response: iterate it (in one thread) for the events;
    ``abort()`` from any thread ends the iteration promptly. Made by KubeClient.watch."""

    def __init__(self, http: httpx.Client, extensions: dict[str, str] | None = None) -> None:
        self._http = http
        self._extensions = extensions
        self._lock = threading.Lock()
        self._resp: httpx.Response | None = None
        self._aborted = False
        self._closed = False

    @property
    def aborted(self) -> bool:
        return self._aborted

    def open(self, path: str, params: dict[str, str], timeout: httpx.Timeout) -> httpx.Response:
        """Send the watch request; the response (headers read) is what gets iterated."""
        request = self._http.build_request(
            "GET", path, params=params, timeout=timeout, extensions=self._extensions
        )
        try:
            resp = self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise KubeError(0, "Unreachable", f"watch {path}: {exc}") from exc
        self._attach(resp)
        return resp

    def _attach(self, resp: httpx.Response) -> None:
        """The response being read (its socket is what abort shuts down)."""
        with self._lock:
            self._resp = resp
            if self._aborted:
                shutdown_socket(socket_of(resp))

    def abort(self) -> None:
        """End the stream from any thread; the owner's iteration stops at once."""
        with self._lock:
            self._aborted = True
            if self._resp is not None and not self._closed:
                shutdown_socket(socket_of(self._resp))

    def close(self) -> None:
        """Close response and connection (the owning thread, under the lock abort takes, so
        abort never touches a descriptor number after it was freed)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._resp is not None:
                    self._resp.close()
            finally:
                self._http.close()

    def __iter__(self) -> Iterator[JsonObj]:
        if self._resp is None:
            return iter(())
        return _events(self._resp, self)


def socket_of(resp: httpx.Response) -> socket.socket | None:
    """The socket a streamed response is read from (None once its connection is gone)."""
    stream = resp.extensions.get("network_stream")
    found = stream.get_extra_info("socket") if stream is not None else None
    return found if isinstance(found, socket.socket) else None


def ssl_context(config: KubeConfig) -> ssl.SSLContext:
    """The TLS settings of ``config``: its CA, client certificate, insecure-skip-tls-verify
    (also for the console proxies' websockets, openkeel.virt.kubevirt.console_stream)."""
    context = ssl.create_default_context(cafile=config.ca_file or None)
    if not config.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_file and config.key_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context


class KubeClient:
    """Thread-safe JSON client of one API server (see the module docstring on connections)."""

    def __init__(self, config: KubeConfig, timeout: float = 30.0) -> None:
        self.config = config
        self.timeout = timeout
        verify = ssl_context(config)
        self._verify = verify
        self._headers = {"Accept": "application/json"}
        if config.token:
            self._headers["Authorization"] = f"Bearer {config.token}"
        self._auth = _RefreshingAuth(config.credentials) if config.credentials else None
        # tls-server-name: the certificate is checked for (and SNI names) this host
        self._extensions = {"sni_hostname": config.tls_server_name} if config.tls_server_name else None  # fmt: skip
        self._http = self._new_http(httpx.Limits(max_connections=64, max_keepalive_connections=32))
        self._cond = threading.Condition()
        self._busy = 0
        self._closed = False
        self._pool_closed = False
        self._watches: set[WatchStream] = set()

    def _new_http(self, limits: httpx.Limits) -> httpx.Client:
        return httpx.Client(
            base_url=self.config.server,
            verify=self._verify,
            headers=self._headers,
            timeout=self.timeout,
            limits=limits,
            auth=self._auth,
            proxy=self.config.proxy,
            trust_env=False,  # the kubeconfig says whether there is a proxy
        )

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Refuse new requests, abort the watches, wait (bounded) for requests in flight and
        the watches to end, then close the pool. Idempotent. Should a request still be in
        flight after ``timeout``, the pool is closed by that request when it finishes, never
        under it."""
        with self._cond:
            self._closed = True
            watches = list(self._watches)
        for stream in watches:
            stream.abort()
        with self._cond:
            if not self._cond.wait_for(lambda: self._busy == 0 and not self._watches, timeout):
                LOG.error(
                    "Kubernetes client of %s closed with %d requests and %d watches still "
                    "running; the last one closes the pool",
                    self.config.server,
                    self._busy,
                    len(self._watches),
                )
            self._close_pool_if_idle()

    def _close_pool_if_idle(self) -> None:
        """With the lock held: close the shared pool once closed and nobody uses it."""
        if self._closed and self._busy == 0 and not self._pool_closed:
            self._pool_closed = True
            self._http.close()

    @contextmanager
    def _in_use(self, what: str) -> Iterator[None]:
        with self._cond:
            if self._closed:
                raise ClosedError(what)
            self._busy += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._close_pool_if_idle()
                self._cond.notify_all()

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
        with self._in_use(f"{method} {path}"):
            resp = self._send(method, path, content, params, headers)
        if resp.status_code >= 400:
            raise error_from(resp.status_code, resp.content)
        if not resp.content:
            return {}
        result: JsonObj = orjson.loads(resp.content)
        return result

    def _send(
        self,
        method: str,
        path: str,
        content: bytes | None,
        params: dict[str, str] | None,
        headers: dict[str, str] | None,
    ) -> httpx.Response:
        attempts = 2 if method in _IDEMPOTENT else 1
        for attempt in range(attempts):
            try:
                return self._http.request(
                    method, path, content=content, params=params, headers=headers,
                    extensions=self._extensions,
                )  # fmt: skip
            except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
                # A kept-alive connection the server (or a TLS hiccup) broke: a fresh
                # connection usually works; only requests safe to repeat are repeated.
                if attempt + 1 == attempts:
                    raise KubeError(0, "Unreachable", f"{method} {path}: {exc}") from exc
            except httpx.HTTPError as exc:
                raise KubeError(0, "Unreachable", f"{method} {path}: {exc}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def get_text(self, path: str, params: dict[str, str] | None = None) -> str | None:
        """A plain-text GET (pod logs); None when there is nothing to read (404, a container
        not started yet); a refusal (401, 403) raises, so missing rights never look empty."""
        try:
            with self._in_use(f"GET {path}"):
                resp = self._http.get(path, params=params, headers={"Accept": "*/*"}, extensions=self._extensions)  # fmt: skip
        except httpx.HTTPError as exc:
            raise KubeError(0, "Unreachable", f"GET {path}: {exc}") from exc
        if resp.status_code in (401, 403):
            raise error_from(resp.status_code, resp.content)
        return resp.text if resp.status_code == 200 else None

    def ready(self) -> bool:
        """True if the server answers /readyz."""
        try:
            with self._in_use("GET /readyz"):
                return self._http.get("/readyz", timeout=3.0, extensions=self._extensions).status_code == 200  # fmt: skip
        except (httpx.HTTPError, ClosedError):
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
    ) -> Iterator[WatchStream]:
        """Stream watch events from ``resource_version`` (with bookmarks) until the server
        ends the stream or the stream is aborted, on a connection of its own that is closed
        when the block ends; a 410 comes as GoneError (HTTP status or ERROR event)."""
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        if label_selector:
            params["labelSelector"] = label_selector
        path = res.path(namespace)
        stream = self._open_watch(path)
        try:
            timeout = httpx.Timeout(10.0, read=timeout_seconds + 30.0)
            resp = stream.open(path, params, timeout)
            if resp.status_code >= 400:
                raise error_from(resp.status_code, resp.read())
            yield stream
        finally:
            stream.close()
            with self._cond:
                self._watches.discard(stream)
                self._cond.notify_all()

    def _open_watch(self, path: str) -> WatchStream:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=0)
        with self._cond:
            if self._closed:
                raise ClosedError(f"watch {path}")
            stream = WatchStream(self._new_http(limits), self._extensions)
            self._watches.add(stream)
        return stream


def _events(resp: httpx.Response, stream: WatchStream) -> Iterator[JsonObj]:
    try:
        for line in resp.iter_lines():
            if not line.strip():
                continue
            event: JsonObj = orjson.loads(line)
            if event.get("type") == "ERROR":
                status = event.get("object", {})
                code = int(status.get("code", 500))
                raise error_from(code, orjson.dumps(status))
            yield event
    except httpx.HTTPError as exc:
        if stream.aborted:
            return  # ended on purpose (the watcher stops or the client closes)
        raise KubeError(0, "Unreachable", f"watch {resp.request.url.path}: {exc}") from exc
