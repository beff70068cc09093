"""A test-side virt-api over HTTP: serves KubeVirt's subresources, forwards the rest.

A bare kube-apiserver has no ``subresources.kubevirt.io`` group (virt-api is an aggregated API
server). :class:`VirtApiProxy` listens on plain HTTP on 127.0.0.1 (a free port, no auth),
answers ``PUT /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{kind}/{name}/{action}`` with
:class:`~tests.virt.kubevirt.simulator.StandInVirtApi`'s rules and forwards every other request
to the real API server with the real credentials (watches stream through chunk by chunk).
Node lists are narrowed to the test's nodes so a process that runs one compute host per node
(the all-in-one) sees only those. Used by tests/e2e/test_kubevirt_cli.py.

``stop()`` leaves nothing behind: it shuts down (never closes) the client connections and the
upstream streams its handler threads are reading, joins those threads, and only then closes the
upstream pool. Closing a socket another thread still reads lets that thread read whatever gets
the descriptor number next (see openkeel.virt.kubevirt.client).
"""

from __future__ import annotations

import re
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeConfig
from tests import leaks
from tests.virt.kubevirt.simulator import StandInVirtApi

SUBRESOURCE = re.compile(
    r"^/apis/subresources\.kubevirt\.io/v1/namespaces/(?P<ns>[^/]+)/"
    r"(?P<kind>virtualmachines|virtualmachineinstances)/(?P<name>[^/]+)/(?P<action>[a-z]+)$"
)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
              "accept-encoding", "authorization"}  # fmt: skip


def upstream_client(config: KubeConfig) -> httpx.Client:
    """An httpx client of the real API server with the kubeconfig's credentials."""
    verify: ssl.SSLContext | bool = True
    if config.ca_file:
        verify = ssl.create_default_context(cafile=config.ca_file)
    if config.cert_file and config.key_file and isinstance(verify, ssl.SSLContext):
        verify.load_cert_chain(config.cert_file, config.key_file)
    bearer = config.credentials.header() if config.credentials else None
    if bearer is None and config.token:
        bearer = f"Bearer {config.token}"
    headers = {"Authorization": bearer} if bearer else {}
    timeout = httpx.Timeout(30.0, read=None)  # watches stay open for minutes
    limits = httpx.Limits(max_connections=128, max_keepalive_connections=32)
    return httpx.Client(
        base_url=config.server, verify=verify, headers=headers, timeout=timeout, limits=limits
    )


def status_body(code: int, reason: str, message: str) -> bytes:
    """A Kubernetes ``Status`` object, as the API server and virt-api answer errors."""
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
              "reason": reason, "message": message}  # fmt: skip
    return orjson.dumps(status)


class VirtApiProxy:
    """The proxy server; ``kubeconfig(path)`` writes a kubeconfig that points at it."""

    def __init__(self, config: KubeConfig, virt_api: StandInVirtApi, node_prefix: str) -> None:
        self.upstream = upstream_client(config)
        self.virt_api = virt_api
        self.node_prefix = node_prefix
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self.server.daemon_threads = False  # server_close() joins the handler threads
        self._thread = threading.Thread(target=self.server.serve_forever, name="virt-api-proxy")
        self._lock = threading.Lock()
        self._stopping = False
        self._connections: set[socket.socket] = set()
        self._handlers: set[threading.Thread] = set()
        self._streams: set[httpx.Response] = set()
        self._owner: leaks.Owner | None = None
        self._outage_until = 0.0
        self._outage_after: tuple[str, str, float] | None = None

    def outage_after(self, method: str, path_suffix: str, seconds: float) -> None:
        """Once a ``method`` request whose path ends with ``path_suffix`` has been answered,
        the API server is unreachable for ``seconds``: open streams are cut and every
        request is dropped unanswered (a restart, a network partition)."""
        with self._lock:
            self._outage_after = (method, path_suffix, seconds)

    def answered(self, method: str, path: str) -> None:
        with self._lock:
            trigger = self._outage_after
            if trigger is None or method != trigger[0] or not path.endswith(trigger[1]):
                return
            self._outage_after = None
            self._outage_until = time.monotonic() + trigger[2]
            for resp in self._streams:
                k.shutdown_socket(k.socket_of(resp))

    @property
    def in_outage(self) -> bool:
        return time.monotonic() < self._outage_until

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> VirtApiProxy:
        self._owner = leaks.owned_by("the virt-api proxy", self._sockets, self._threads)
        self._thread.start()
        return self

    def _sockets(self) -> list[socket.socket]:
        with self._lock:
            return [*self._connections, *leaks.httpx_sockets(self.upstream)]

    def _threads(self) -> list[threading.Thread]:
        with self._lock:
            return list(self._handlers)

    def stop(self) -> None:
        """Stop accepting, wake every handler thread, join them, then close the upstream."""
        self.server.shutdown()
        self._thread.join()
        with self._lock:
            self._stopping = True
            for conn in self._connections:
                k.shutdown_socket(conn)
            for resp in self._streams:
                k.shutdown_socket(k.socket_of(resp))
        self.server.server_close()
        self.upstream.close()
        if self._owner is not None:
            leaks.released(self._owner)

    def add_connection(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)
            self._handlers.add(threading.current_thread())
            if self._stopping:
                k.shutdown_socket(conn)

    def drop_connection(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)
            self._handlers.discard(threading.current_thread())

    def add_stream(self, resp: httpx.Response) -> None:
        with self._lock:
            self._streams.add(resp)
            if self._stopping:
                k.shutdown_socket(k.socket_of(resp))

    def close_stream(self, resp: httpx.Response) -> None:
        """Close an upstream response under the lock stop() shuts sockets down with."""
        with self._lock:
            self._streams.discard(resp)
            resp.close()

    def kubeconfig(self, path: Path) -> Path:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
            "users": [{"name": "proxy", "user": {}}],
            "contexts": [{"name": "proxy", "context": {"cluster": "proxy", "user": "proxy"}}],
            "current-context": "proxy",
        }
        path.write_bytes(orjson.dumps(doc))  # JSON is YAML
        return path

    def subresource(self, method: str, path: str, body: bytes) -> tuple[int, bytes] | None:
        """virt-api's answer to a subresource request; None when ``path`` is not one."""
        found = SUBRESOURCE.match(path)
        if found is None:
            return None
        if method != "PUT":
            return 405, status_body(405, "MethodNotAllowed", f"{method} is not allowed")
        ns, name, action = found["ns"], found["name"], found["action"]
        options: JsonObj = orjson.loads(body) if body.strip() else {}
        calls = {
            "start": lambda: self.virt_api.start(ns, name),
            "stop": lambda: self.virt_api.stop(ns, name, options.get("gracePeriod")),
            "pause": lambda: self.virt_api.pause(ns, name),
            "unpause": lambda: self.virt_api.unpause(ns, name),
            "softreboot": lambda: self.virt_api.soft_reboot(ns, name),
            "reset": lambda: self.virt_api.reset(ns, name),
            "addvolume": lambda: self.virt_api.add_volume(ns, name, options),
            "removevolume": lambda: self.virt_api.remove_volume(ns, name, options["name"]),
        }
        if action not in calls:
            return 404, status_body(404, "NotFound", f"unknown subresource {action}")
        try:
            calls[action]()
        except k.KubeError as exc:
            code = exc.status or 500
            return code, status_body(code, exc.reason, exc.message)
        return 202, b""

    def test_node_event(self, line: bytes) -> bool:
        """Whether a Node watch event line is about one of this test's Nodes (bookmarks and
        errors, which name no Node, pass)."""
        if not line.strip():
            return False
        name = orjson.loads(line).get("object", {}).get("metadata", {}).get("name")
        return name is None or str(name).startswith(self.node_prefix)

    def only_test_nodes(self, path: str, query: str, content: bytes) -> bytes:
        """A node list narrowed to the nodes this test made (other sessions make nodes too)."""
        if path != k.NODES.path() or "watch" in parse_qs(query):
            return content
        listed = orjson.loads(content)
        items = listed.get("items") or []
        listed["items"] = [n for n in items if n["metadata"]["name"].startswith(self.node_prefix)]
        return orjson.dumps(listed)


def _handler_class(proxy: VirtApiProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: pytest shows failures, not traffic

        def setup(self) -> None:
            super().setup()
            proxy.add_connection(self.connection)

        def finish(self) -> None:
            proxy.drop_connection(self.connection)
            super().finish()

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _answer(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self) -> None:
            body = self._body()
            split = urlsplit(self.path)
            if proxy.in_outage:
                self.close_connection = True  # dropped unanswered: the client sees a reset
                return
            answered = proxy.subresource(self.command, split.path, body)
            if answered is not None:
                self._answer(*answered)
                proxy.answered(self.command, split.path)
                return
            headers = {
                key: value for key, value in self.headers.items() if key.lower() not in HOP_BY_HOP
            }
            headers["Accept-Encoding"] = "identity"  # streams are passed on as they come
            request = proxy.upstream.build_request(
                self.command, self.path, content=body or None, headers=headers
            )
            try:
                resp = proxy.upstream.send(request, stream=True)
            except httpx.HTTPError as exc:
                self._answer(502, status_body(502, "BadGateway", str(exc)))
                return
            proxy.add_stream(resp)
            try:
                if "watch" in parse_qs(split.query) and resp.status_code < 400:
                    self._stream(resp, split.path == k.NODES.path())
                else:
                    content = proxy.only_test_nodes(split.path, split.query, resp.read())
                    self._answer(resp.status_code, content, resp.headers.get("Content-Type", ""))
                    proxy.answered(self.command, split.path)
            finally:
                proxy.close_stream(resp)

        def _stream(self, resp: httpx.Response, nodes: bool = False) -> None:
            """Pass the watch on chunk by chunk; a Node watch event by event, without the
            events of other tests' Nodes (as node lists are narrowed)."""
            self.send_response(resp.status_code)
            self.send_header("Content-Type", resp.headers.get("Content-Type", ""))
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pending = b""
            try:
                for raw in resp.iter_raw():
                    chunk = raw
                    if nodes:
                        pending += raw
                        *lines, pending = pending.split(b"\n")
                        chunk = b"".join(line + b"\n" for line in lines if proxy.test_node_event(line))  # fmt: skip
                    if chunk:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (httpx.HTTPError, OSError):
                self.close_connection = True  # client or upstream went away

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _forward

    return Handler
