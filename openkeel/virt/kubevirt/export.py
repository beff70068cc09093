"""The bytes of a KubeVirt snapshot, through KubeVirt's VirtualMachineExport (decision 0071).

A snapshot's data is in the cluster (decision 0051); an image service that keeps bytes (Glance,
or the embedded catalog's files) needs them. KubeVirt's export API serves a volume over HTTPS:
a ``VirtualMachineExport`` (export.kubevirt.io) of the ``VirtualMachineSnapshot`` names a
Secret holding the token (``tokenSecretRef``, key ``token``); KubeVirt's export controller
restores the snapshot's volumes, starts its export server and, once it serves them, sets phase
``Ready`` and ``status.links.{internal,external}``: the CA certificate and, per volume, URLs in
formats ``raw`` (``disk.img``), ``gzip`` (``disk.img.gz``), ``dir``/``tar.gz`` (filesystem
volumes). Each request carries the token in the ``x-kubevirt-export-token`` header. The export
is removed by KubeVirt after ``ttlDuration``; we delete it (and the Secret) as soon as the
download ends or fails.
"""

from __future__ import annotations

import base64
import logging
import secrets
import ssl
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.client import JsonObj, KubeClient, KubeError
from openkeel.virt.kubevirt.manifests import naming

LOG = logging.getLogger(__name__)

TOKEN_HEADER = "x-kubevirt-export-token"
# Formats we can turn into a raw disk image, best first (gzip moves fewer bytes).
FORMATS = ("gzip", "raw")
CHUNK = 1 << 20


@dataclass(frozen=True)
class ExportLink:
    """Where one volume of a Ready export is served."""

    url: str
    format: str
    cert: str  # PEM
    token: str


def export_name(image_id: str) -> str:
    return naming.dns_label(f"export-{image_id}")


def token_secret_name(image_id: str) -> str:
    return naming.dns_label(f"export-token-{image_id}")


def export_objects(
    namespace: str, image_id: str, server_id: str, snapshot: str, ttl: str, token: str
) -> tuple[JsonObj, JsonObj]:
    """The token Secret and the VirtualMachineExport of the VM snapshot ``snapshot``."""
    labels = {naming.LABEL_SERVER_ID: server_id, naming.LABEL_IMAGE_ID: image_id}
    secret = {
        "metadata": {"name": token_secret_name(image_id), "namespace": namespace, "labels": dict(labels)},
        "type": "Opaque",
        "stringData": {"token": token},
    }  # fmt: skip
    export = {
        "metadata": {"name": export_name(image_id), "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "source": {"apiGroup": "snapshot.kubevirt.io", "kind": "VirtualMachineSnapshot", "name": snapshot},
            "tokenSecretRef": token_secret_name(image_id),
            "ttlDuration": ttl,
        },
    }  # fmt: skip
    return secret, export


def pick_link(
    status: JsonObj, prefer: str, names: tuple[str, ...], token: str
) -> ExportLink | None:
    """The URL of the root volume in a Ready export's status (``prefer``red link first). The
    volume is the one named as, or ending in ``-``, one of ``names`` (the root claim, the VM's
    volume ``root``: KubeVirt names a snapshot's restored volumes ``<export>-<volume>``), else
    the only one. None while the export is not Ready or shows no links yet;
    PermanentDriverError when it serves no such volume or none in a format we read."""
    if status.get("phase") != "Ready":
        return None
    links = status.get("links") or {}
    other = "internal" if prefer == "external" else "external"
    for kind in (prefer, other):
        link = links.get(kind)
        if not link or not link.get("volumes"):
            continue
        volumes = link["volumes"]
        chosen = [
            v for v in volumes for n in names if v["name"] == n or v["name"].endswith(f"-{n}")
        ]
        if not chosen and len(volumes) == 1:
            chosen = volumes
        if not chosen:
            served = ", ".join(v["name"] for v in volumes)
            raise errors.PermanentDriverError(f"The export serves no root volume ({served}).")
        formats = {f["format"]: f["url"] for f in chosen[0].get("formats", []) or []}
        for fmt in FORMATS:
            if fmt in formats:
                return ExportLink(formats[fmt], fmt, pem(link.get("cert", "")), token)
        raise errors.PermanentDriverError(
            f"The export serves {chosen[0]['name']} only as {sorted(formats)}; raw or gzip needed."
        )
    return None


def pem(cert: str) -> str:
    """The link's CA certificate as PEM (KubeVirt writes PEM; base64 of PEM is accepted)."""
    if not cert or "BEGIN CERTIFICATE" in cert:
        return cert
    try:
        return base64.b64decode(cert).decode()
    except ValueError:
        return cert


def download(link: ExportLink, timeout: float, done: Callable[[], None]) -> Iterator[bytes]:
    """The volume's raw bytes, streamed; ``done`` runs when the stream ends, fails or is
    closed (the export is then deleted)."""
    try:
        context = ssl.create_default_context(cadata=link.cert) if link.cert else ssl.create_default_context()  # fmt: skip
        unzip = zlib.decompressobj(16 + zlib.MAX_WBITS) if link.format == "gzip" else None
        headers = {TOKEN_HEADER: link.token}
        with (
            httpx.Client(verify=context, timeout=timeout) as http,
            http.stream("GET", link.url, headers=headers) as resp,
        ):
            if resp.status_code != 200:
                raise errors.PermanentDriverError(
                    f"Export download {link.url} answered {resp.status_code}."
                )
            for chunk in resp.iter_raw(CHUNK):
                data = unzip.decompress(chunk) if unzip else chunk
                if data:
                    yield data
            if unzip:
                tail = unzip.flush()
                if not unzip.eof:
                    raise errors.PermanentDriverError(f"Export download {link.url} was cut short.")  # fmt: skip
                if tail:
                    yield tail
    except httpx.HTTPError as exc:
        raise errors.TransientDriverError(f"Export download {link.url} failed: {exc}") from exc
    except zlib.error as exc:
        raise errors.PermanentDriverError(f"Export download {link.url}: {exc}") from exc
    finally:
        done()


def remove(client: KubeClient, namespace: str, image_id: str) -> None:
    """Delete the export and its token Secret (either may be gone already)."""
    for res, name in ((k.VM_EXPORTS, export_name(image_id)), (k.SECRETS, token_secret_name(image_id))):  # fmt: skip
        try:
            client.delete(res, name, namespace)
        except KubeError as exc:  # KubeVirt removes the export at its TTL anyway
            LOG.warning("Could not delete %s %s/%s: %s", res.kind, namespace, name, exc)


def secret_token(secret: JsonObj) -> str | None:
    """The ``token`` of a Secret as the API server returns it (``data`` is base64)."""
    raw = (secret.get("data") or {}).get("token")
    return base64.b64decode(raw).decode() if raw else None


def new_token() -> str:
    return secrets.token_urlsafe(32)
