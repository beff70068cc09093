"""KubeClient, Watcher and the driver's teardown: no thread or socket outlives its owner.

A watch thread left reading a socket another thread closed reads whatever later gets that file
descriptor number (a SQLite file, another TLS connection): CI saw ``WRONG_VERSION_NUMBER`` and
``DECRYPTION_FAILED_OR_BAD_RECORD_MAC``, then a corrupt test database. These tests run against a
small local HTTP server whose watches never end on their own, so nothing but an abort can end
them. They need no kube-apiserver.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.driver import KubevirtDriver
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.kubevirt.virtapi import HttpVirtApi
from openkeel.virt.kubevirt.watch import Watcher


class Server:
    """An API server stand-in: lists are empty, watches stay open until ``stop()``."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.watch_peers: list[int] = []
        self.request_peers: list[int] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = False  # server_close() joins every handler thread
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fake-apiserver")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> Server:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _json(self, body: object) -> None:
            data = orjson.dumps(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            split = urlsplit(self.path)
            if "watch" not in parse_qs(split.query):
                server.request_peers.append(self.client_address[1])
                self._json({"items": [], "metadata": {"resourceVersion": "1"}})
                return
            server.watch_peers.append(self.client_address[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            # A watch with nothing to say, until the server stops or the client goes away.
            while not server.released.wait(0.01):
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    break
            self.close_connection = True

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server().start()
    yield running
    running.stop()


@pytest.fixture
def client(server: Server) -> Iterator[k.KubeClient]:
    made = k.KubeClient(k.KubeConfig(server=server.url), timeout=5.0)
    yield made
    made.close()


def _socket_fds() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                found.add(fd)
        except OSError:
            continue
    return found


def until(predicate: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_watcher_stop_ends_its_thread_while_the_stream_is_idle(client: k.KubeClient) -> None:
    watcher = Watcher(client, k.VMIS, lambda kind, obj: None).start()
    assert watcher.synced.wait(5)
    assert until(lambda: watcher._stream is not None)
    started = time.monotonic()
    assert watcher.stop(timeout=5.0)
    assert time.monotonic() - started < 2.0
    assert not watcher.running
    assert watcher.stop()  # idempotent


def test_watcher_stopped_before_it_starts_is_stopped() -> None:
    unused = k.KubeClient(k.KubeConfig(server="http://127.0.0.1:9"))
    watcher = Watcher(unused, k.VMIS, lambda kind, obj: None)
    assert watcher.stop()
    unused.close()


def test_a_watch_holds_a_connection_of_its_own(server: Server, client: k.KubeClient) -> None:
    with client.watch(k.VMIS, "1") as stream:
        client.list(k.VMIS)
        client.list(k.VMIS)
        stream.abort()
        assert list(stream) == []
    assert len(server.watch_peers) == 1
    assert server.watch_peers[0] not in server.request_peers


def test_close_aborts_watches_and_waits_for_their_readers(client: k.KubeClient) -> None:
    before = _socket_fds()
    ended = threading.Event()

    def read() -> None:
        with client.watch(k.VMIS, "1") as stream:
            for _event in stream:
                pass
        ended.set()

    reader = threading.Thread(target=read, name="test-reader")
    reader.start()
    assert until(lambda: len(client._watches) == 1 and len(_socket_fds() - before) >= 1)
    client.close()  # returns only after the reader closed its own connection
    assert ended.is_set()
    reader.join(5)
    assert not reader.is_alive()
    client.close()  # idempotent
    with pytest.raises(k.ClosedError):
        client.list(k.VMIS)
    with pytest.raises(k.ClosedError), client.watch(k.VMIS, "1"):
        pass
    assert not client.ready()
    assert until(lambda: not (_socket_fds() - before))


def test_driver_cleanup_joins_the_watch_before_closing_its_client(server: Server) -> None:
    before = {t.ident for t in threading.enumerate()}
    client = k.KubeClient(k.KubeConfig(server=server.url), timeout=5.0)
    driver = KubevirtDriver(client, KubevirtSettings(), HttpVirtApi(client), owns_client=True)
    driver.init_host("host-a")
    watcher = driver._watcher
    assert watcher is not None and until(lambda: watcher._stream is not None)
    driver.cleanup_host("host-a")
    assert not watcher.running and client.closed
    assert [t.name for t in threading.enumerate() if t.ident not in before and t.name.startswith("watch-")] == []  # fmt: skip
    driver.init_host("host-a")  # a restart after a graceful stop gets a new client
    assert driver.client is not client and not driver.client.closed
    assert isinstance(driver.virt_api, HttpVirtApi) and driver.virt_api.client is driver.client
    driver.cleanup_host("host-a")
    assert driver.client.closed


def test_closing_under_a_tls_watch_never_lets_it_read_a_reused_descriptor() -> None:
    """CI's failure, on the real kube-apiserver (TLS): close the client while a thread reads a
    watch, let a new socket take the freed descriptor number, then wake the old watch. Before
    the fix the reader stole the new owner's first bytes (``WRONG_VERSION_NUMBER``)."""
    from tests.virt.kubevirt import kube_env

    client, admin = kube_env.connect(), kube_env.connect()
    if client is None or admin is None:
        kube_env.unavailable(f"no answer with {kube_env.KUBECONFIG}")
    ns, outcome = "default", dict[str, object]()
    since = admin.list(k.SECRETS, ns)["metadata"]["resourceVersion"]

    def read() -> None:
        try:
            with client.watch(k.SECRETS, since, ns, timeout_seconds=60) as events:
                outcome["events"] = [e["type"] for e in events]
        except Exception as exc:  # reported by the assertion below
            outcome["error"] = repr(exc)

    reader = threading.Thread(target=read, name="test-tls-reader")
    reader.start()
    assert until(lambda: len(client._watches) == 1)
    client.close()
    assert not reader.is_alive()  # close() waited for it
    mine, peer = socket.socketpair()
    name = f"okt-fd-{os.getpid()}-{time.monotonic_ns()}"
    try:
        peer.sendall(b"a reply meant for the new owner")
        admin.create(k.SECRETS, {"metadata": {"name": name, "namespace": ns}})
        assert mine.recv(100) == b"a reply meant for the new owner"
        assert outcome == {"events": []}
    finally:
        admin.delete(k.SECRETS, name, ns)
        admin.close()
        mine.close()
        peer.close()
