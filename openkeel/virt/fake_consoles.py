"""The simulated guests' consoles: real TCP endpoints the console proxies connect to.

Used by FakeDriver (openkeel.virt.fake). Each guest gets, on first ask, a serial console (a TCP
stream that first prints the guest's console log, then echoes what it receives, as a shell
would) and a VNC server speaking the RFB 3.8 handshake with security type None and a small
solid framebuffer (enough for noVNC to connect and draw). Listeners bind 127.0.0.1 on a free
port; a guest's are closed when it is destroyed, all of them when the host stops.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

RFB_VERSION = b"RFB 003.008\n"
WIDTH, HEIGHT = 64, 48
# 32 bits per pixel, depth 24, little-endian true colour, 8 bits a channel (red at bit 16).
PIXEL_FORMAT = struct.pack(">BBBBHHHBBB3x", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
_MESSAGE_SIZES = {0: 19, 4: 7, 5: 5}  # SetPixelFormat, KeyEvent, PointerEvent (after type)


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def serve_serial(conn: socket.socket, log: Callable[[], str]) -> None:
    """The guest's serial line: its log so far, then an echo of every byte."""
    conn.sendall(log().replace("\n", "\r\n").encode())
    while data := conn.recv(4096):
        conn.sendall(data)


def serve_rfb(conn: socket.socket, name: str) -> None:
    """An RFB 3.8 server: handshake (security None), ServerInit, then a full frame for each
    non-incremental update request (incremental ones: nothing changed, no answer)."""
    conn.sendall(RFB_VERSION)
    _exactly(conn, len(RFB_VERSION))
    conn.sendall(b"\x01\x01")  # one security type: None
    if _exactly(conn, 1) != b"\x01":
        conn.sendall(struct.pack(">I", 1))
        return
    conn.sendall(struct.pack(">I", 0))  # SecurityResult OK
    _exactly(conn, 1)  # ClientInit (shared flag)
    title = name.encode()
    # One write: clients (tempest's) read ServerInit as one websocket frame.
    conn.sendall(
        struct.pack(">HH", WIDTH, HEIGHT) + PIXEL_FORMAT + struct.pack(">I", len(title)) + title
    )
    bytes_per_pixel = 4
    while True:
        kind = _exactly(conn, 1)[0]
        if kind == 0:
            bytes_per_pixel = max(1, _exactly(conn, 19)[3] // 8)
        elif kind == 2:  # SetEncodings
            (count,) = struct.unpack(">xH", _exactly(conn, 3))
            _exactly(conn, 4 * count)
        elif kind == 3:  # FramebufferUpdateRequest
            incremental = _exactly(conn, 9)[0]
            if not incremental:
                header = struct.pack(">BxHHHHHi", 0, 1, 0, 0, WIDTH, HEIGHT, 0)  # Raw
                conn.sendall(header + b"\x40" * (WIDTH * HEIGHT * bytes_per_pixel))
        elif kind == 6:  # ClientCutText
            (length,) = struct.unpack(">3xI", _exactly(conn, 7))
            _exactly(conn, length)
        elif kind in _MESSAGE_SIZES:
            _exactly(conn, _MESSAGE_SIZES[kind])
        else:
            return


class ConsoleListener:
    """One TCP listener on 127.0.0.1 serving each connection with ``serve`` on a thread."""

    def __init__(self, serve: Callable[[socket.socket], None], label: str) -> None:
        self._serve = serve
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name=f"fake-console-{label}")
        self._acceptor.daemon = True
        self._acceptor.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._conns.add(conn)
                thread = threading.Thread(target=self._run, args=(conn,), daemon=True)
                self._threads.append(thread)
            thread.start()

    def _run(self, conn: socket.socket) -> None:
        try:
            self._serve(conn)
        except OSError:
            pass  # the client went away (or the listener is closing)
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def held(self) -> tuple[list[socket.socket], list[threading.Thread]]:
        """Test hook: the sockets and threads this listener holds now."""
        with self._lock:
            return [self._sock, *self._conns], [self._acceptor, *self._threads]

    def close(self) -> None:
        """Stop accepting, cut open connections, and wait for every thread."""
        with self._lock:
            self._closed = True
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._acceptor.join()
        for thread in threads:
            thread.join()


class GuestConsoles:
    """The console listeners of one simulated host's guests, made on first ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[tuple[str, str], ConsoleListener] = {}

    def port(self, uuid: str, kind: str, serve: Callable[[socket.socket], None]) -> int:
        """The port of the guest's ``kind`` ("vnc" or "serial") console."""
        with self._lock:
            listener = self._listeners.get((uuid, kind))
            if listener is None:
                listener = ConsoleListener(serve, f"{kind}-{uuid[:8]}")
                self._listeners[(uuid, kind)] = listener
            return listener.port

    def held(self) -> tuple[list[socket.socket], list[threading.Thread]]:
        """Test hook: the sockets and threads of every listener (for leak checks of tests
        whose simulated hosts outlive them)."""
        with self._lock:
            listeners = list(self._listeners.values())
        sockets: list[socket.socket] = []
        threads: list[threading.Thread] = []
        for listener in listeners:
            more_sockets, more_threads = listener.held()
            sockets += more_sockets
            threads += more_threads
        return sockets, threads

    def close(self, uuid: str | None = None) -> None:
        """Close the guest's listeners (every guest's when None)."""
        with self._lock:
            keys = [key for key in self._listeners if uuid is None or key[0] == uuid]
            closing = [self._listeners.pop(key) for key in keys]
        for listener in closing:
            listener.close()
