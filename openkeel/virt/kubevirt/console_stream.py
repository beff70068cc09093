"""KubeVirt guest consoles for the console proxies: the ``vnc`` and ``console`` websocket
subresources of a VirtualMachineInstance (``subresources.kubevirt.io``), reached through the
API server with the kubeconfig's credentials, as ``virtctl vnc`` / ``virtctl console`` do.

virt-api speaks raw bytes in binary frames under the ``plain.kubevirt.io`` subprotocol: the
RFB stream of the guest's VNC server, or its serial line. The driver's ConsoleInfo carries
the subresource path as its internal access path (openkeel.virt.kubevirt.devices).
"""

from __future__ import annotations

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from openkeel.virt.console_stream import EndpointRefused, GuestStream, open_tcp
from openkeel.virt.kubevirt.client import KubeConfig, ssl_context
from openkeel.virt.kubevirt.virtapi import SUBRESOURCES

SUBPROTOCOL = Subprotocol("plain.kubevirt.io")


class SubresourceStream:
    """One open VNC or serial subresource websocket."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws

    async def read(self) -> bytes:
        try:
            frame = await self._ws.recv()
        except ConnectionClosed:
            return b""
        return frame if isinstance(frame, bytes) else frame.encode()

    async def write(self, data: bytes) -> None:
        await self._ws.send(data)

    async def close(self) -> None:
        await self._ws.close()


class KubevirtConsoleOpener:
    """Opens subresource paths as websockets to the API server; other endpoints as TCP."""

    def __init__(self, config: KubeConfig) -> None:
        self._config = config

    def _authorization(self) -> str | None:
        if self._config.token:
            return f"Bearer {self._config.token}"
        credentials = self._config.credentials
        return credentials.header() if credentials is not None else None

    async def __call__(self, host: str, port: int, path: str | None) -> GuestStream:
        if not path or not path.startswith(f"{SUBRESOURCES}/"):
            return await open_tcp(host, port, path)
        server = self._config.server
        url = server.replace("https://", "wss://", 1).replace("http://", "ws://", 1) + path
        headers = {}
        if auth := self._authorization():
            headers["Authorization"] = auth
        tls = ssl_context(self._config) if url.startswith("wss://") else None
        # tls-server-name: the certificate is checked for (and SNI names) this host
        server_hostname = self._config.tls_server_name if tls is not None else None
        try:
            ws = await connect(url, subprotocols=[SUBPROTOCOL], additional_headers=headers,
                               ssl=tls, max_size=None, open_timeout=10,
                               server_hostname=server_hostname)  # fmt: skip
        except InvalidHandshake as exc:
            raise EndpointRefused(str(exc)) from exc
        return SubresourceStream(ws)
