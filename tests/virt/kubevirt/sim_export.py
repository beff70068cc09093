"""KubeVirt's export controller and export server, for the simulator (decision 0071).

What it keeps of KubeVirt's documented VirtualMachineExport semantics (user guide "Export
API", export.kubevirt.io), including what makes the driver's job harder:

- an export stays ``Pending`` (condition ``Ready`` False) until its source is usable: a
  ``VirtualMachineSnapshot`` that is ``readyToUse``, a ``PersistentVolumeClaim``/DataVolume that
  exists, a ``VirtualMachine`` that is not running), and its ``tokenSecretRef`` Secret exists
  with a ``token`` key;
- then ``Ready`` with ``serviceName`` ``virt-export-<name>``, ``tokenSecretRef``,
  ``ttlExpirationTime`` (creation + ``ttlDuration``, default 2 h), ``virtualMachineName`` and
  ``links.internal``/``links.external``, each with the CA ``cert`` (PEM) and per volume the
  formats ``raw`` (``disk.img``) and ``gzip`` (``disk.img.gz``). A snapshot's volumes are
  restored as ``<export>-<VM volume name>``;
- past ``ttlExpirationTime`` the export is deleted; an export whose source goes away is
  ``Terminated``;
- the export server (here one HTTPS server for every export, at the external link's
  virt-exportproxy path) answers 401 without the right ``x-kubevirt-export-token``, 404 for an
  export that is not Ready or a volume it does not serve.

:attr:`ExportController.ready` False keeps every export ``Pending`` (an export server that
never comes up). The internal link names the cluster Service, which tests cannot resolve.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt import export as export_api
from openkeel.virt.kubevirt.client import JsonObj, KubeClient
from tests.tls_certs import self_signed

DISK_SIZE = 3 * 2**20 // 2  # 1.5 MiB: more than one download chunk
PREFIX = "/api/export.kubevirt.io/v1beta1/namespaces/"


def disk_bytes(namespace: str, claim: str) -> bytes:
    """What the simulated volume ``namespace/claim`` holds (deterministic)."""
    header = f"openkeel-sim-disk {namespace}/{claim}\n".encode()
    pattern = hashlib.sha256(header).digest()
    body = header + pattern * (DISK_SIZE // len(pattern) + 1)
    return body[:DISK_SIZE]


def parse_duration(value: str) -> dt.timedelta:
    """Go's time.Duration text (``1h``, ``30m``, ``90s``, ``1h30m``)."""
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    for char in value:
        if char.isdigit() or char == ".":
            number += char
        else:
            total += float(number) * units[char]
            number = ""
    return dt.timedelta(seconds=total)


def _stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class ExportController:
    """The export controller (status) and one HTTPS export server for all exports."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.ready = True
        self.downloads: list[tuple[str, str, int]] = []  # (path, token ok?, status)
        cert_path, key_path = self_signed(Path(tempfile.mkdtemp(prefix="sim-export-")), "virt-exportproxy")  # fmt: skip
        self.cert = cert_path.read_bytes()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        controller = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = controller.serve(self.path, self.headers.get("x-kubevirt-export-token"))  # fmt: skip
                controller.downloads.append((self.path, str(status), len(body)))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="sim-export-server", daemon=True
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    # --- the controller ----------------------------------------------------------------------

    def on_export(self, kind: str, export: JsonObj) -> None:
        meta = export["metadata"]
        if kind == "DELETED":
            return
        ns, name, status = meta["namespace"], meta["name"], export.get("status") or {}
        created = dt.datetime.strptime(meta["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=dt.UTC
        )
        expires = created + parse_duration(export["spec"].get("ttlDuration") or "2h")
        if dt.datetime.now(dt.UTC) >= expires:
            self.client.delete(k.VM_EXPORTS, name, ns)
            return
        volumes, vm_name, waiting = self._source(ns, export["spec"]["source"])
        if waiting is None and not self._token(ns, export):
            waiting = "the token Secret is missing"
        if waiting is None and not self.ready:
            waiting = "the export server is not ready"
        if waiting is not None:
            phase = "Terminated" if status.get("phase") == "Ready" else "Pending"
            new: JsonObj = {
                "phase": phase,
                "conditions": [self._condition("False", "PodPending", waiting)],
            }
        else:
            new = {
                "phase": "Ready",
                "serviceName": f"virt-export-{name}",
                "tokenSecretRef": export["spec"].get("tokenSecretRef"),
                "ttlExpirationTime": _stamp(expires),
                "virtualMachineName": vm_name,
                "conditions": [self._condition("True", "PodReady", "")],
                "links": {
                    "internal": self._link(f"https://virt-export-{name}.{ns}.svc", volumes),
                    "external": self._link(
                        f"https://127.0.0.1:{self.port}{PREFIX}{ns}/virtualmachineexports/{name}",
                        volumes,
                    ),
                },
            }
            if status.get("phase") == "Ready" and status.get("links") == new["links"]:
                return
        if status.get("phase") == new["phase"] and new["phase"] != "Ready":
            return
        self.client.patch(k.VM_EXPORTS, name, {"status": new}, ns, sub="status")

    @staticmethod
    def _condition(value: str, reason: str, message: str) -> JsonObj:
        condition = {"type": "Ready", "status": value, "reason": reason,
                     "lastTransitionTime": _stamp(dt.datetime.now(dt.UTC))}  # fmt: skip
        if message:  # (this API server refuses an empty string here)
            condition["message"] = message
        return condition

    def _link(self, base: str, volumes: dict[str, str]) -> JsonObj:
        return {
            "cert": self.cert.decode(),
            "volumes": [
                {"name": volume, "formats": [
                    {"format": "raw", "url": f"{base}/volumes/{volume}/disk.img"},
                    {"format": "gzip", "url": f"{base}/volumes/{volume}/disk.img.gz"},
                ]}
                for volume in sorted(volumes)
            ],
        }  # fmt: skip

    def _token(self, ns: str, export: JsonObj) -> str | None:
        ref = export["spec"].get("tokenSecretRef")
        secret = self.client.get_or_none(k.SECRETS, ref, ns) if ref else None
        if secret is None:
            return None
        return export_api.secret_token(secret)

    def _source(self, ns: str, source: JsonObj) -> tuple[dict[str, str], str, str | None]:
        """(export volume name -> claim, VM name, why not ready or None)."""
        kind, name = source.get("kind"), source["name"]
        if kind == "PersistentVolumeClaim":
            found = self.client.get_or_none(k.DATA_VOLUMES, name, ns) or self.client.get_or_none(k.PVCS, name, ns)  # fmt: skip
            return ({name: name}, "", None if found else f"PVC {name} not found")
        if kind == "VirtualMachineSnapshot":
            snap = self.client.get_or_none(k.VM_SNAPSHOTS, name, ns)
            if snap is None or not (snap.get("status") or {}).get("readyToUse"):
                return {}, "", f"VirtualMachineSnapshot {name} is not ready"
            vm_name = snap["spec"]["source"]["name"]
        elif kind == "VirtualMachine":
            vm_name = name
            if self.client.get_or_none(k.VMIS, name, ns) is not None:
                return {}, vm_name, "the VM is running"
        else:
            return {}, "", f"source kind {kind} is not supported"
        vm = self.client.get_or_none(k.VMS, vm_name, ns)
        if vm is None:
            return {}, vm_name, f"VirtualMachine {vm_name} not found"
        volumes = {}
        for volume in vm["spec"]["template"]["spec"].get("volumes", []):
            for key in ("dataVolume", "persistentVolumeClaim"):
                if key in volume:
                    claim = volume[key].get("name") or volume[key].get("claimName")
                    exported = f"{source['name']}-{volume['name']}" if kind == "VirtualMachineSnapshot" else claim  # fmt: skip
                    volumes[exported] = claim
        return volumes, vm_name, None

    # --- the export server -------------------------------------------------------------------

    def serve(self, path: str, token: str | None) -> tuple[int, bytes]:
        if not path.startswith(PREFIX):
            return 404, b"not found"
        parts = path[len(PREFIX):].split("/")  # fmt: skip
        # <ns>/virtualmachineexports/<name>/volumes/<volume>/<file>
        if len(parts) != 6 or parts[1] != "virtualmachineexports" or parts[3] != "volumes":
            return 404, b"not found"
        ns, name, volume, file = parts[0], parts[2], parts[4], parts[5]
        export = self.client.get_or_none(k.VM_EXPORTS, name, ns)
        if export is None or (export.get("status") or {}).get("phase") != "Ready":
            return 404, b"export not ready"
        if token is None or token != self._token(ns, export):
            return 401, b"unauthorized"
        volumes, _vm, waiting = self._source(ns, export["spec"]["source"])
        if waiting is not None or volume not in volumes:
            return 404, b"no such volume"
        data = disk_bytes(ns, volumes[volume])
        if file == "disk.img":
            return 200, data
        if file == "disk.img.gz":
            return 200, gzip.compress(data, mtime=0)
        return 404, b"no such format"
