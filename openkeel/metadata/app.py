"""The metadata service as an ASGI app: Nova's OpenStack (``/openstack/...``) and EC2
(``/<version>/meta-data/...``) metadata of the guest asking.

Request path: ``/`` lists the EC2 versions; otherwise the requester is identified
(:mod:`identify`: proxy headers with their HMAC, 400/403, or the fixed IP), its server read
(:mod:`records`, cached ``[api] metadata_cache_expiration`` seconds per instance id or address),
the path looked up in its :class:`MetadataTree` (404), and the answer sent; ``password``
answers GET with the stored password and stores a POSTed one (409 when one is set, 400 past
1020 bytes). Served on its own port by ``openkeel metadata``, under ``/metadata`` by the
all-in-one.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass
from typing import Any

from oslo_config import cfg

from openkeel.clients.vendordata import (
    DynamicVendordata,
    VendordataError,
    VendordataRequest,
    VendordataSettings,
    static_vendordata,
)
from openkeel.domain.guest_metadata import password
from openkeel.domain.guest_metadata.tree import Answer, MetadataTree, NoSuchPath, VendorData
from openkeel.domain.guest_metadata.versions import EC2_VERSIONS, LATEST
from openkeel.metadata.cache import ExpiringCache
from openkeel.metadata.identify import (
    UNKNOWN_ERROR,
    MetadataHttpError,
    ProxySettings,
    Requester,
    identify,
)
from openkeel.metadata.records import GuestRecords, Located
from openkeel.runtime.asgi_apps import (
    ASGIApp,
    BodyTooLarge,
    PrefixedApp,
    Receive,
    Scope,
    Send,
    Workers,
    read_body,
)
from openkeel.runtime.clock import Clock, SystemClock

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetadataSettings:
    """The options the service reads (see openkeel.conf.metadata)."""

    proxy: ProxySettings
    vendordata: VendordataSettings
    cache_seconds: int = 15

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> MetadataSettings:
        if conf.neutron.service_metadata_proxy and not conf.neutron.metadata_proxy_shared_secret:
            LOG.warning("metadata_proxy_shared_secret is not configured, the metadata "
                        "information returned by the proxy cannot be trusted")  # fmt: skip
        proxy = ProxySettings(
            service_metadata_proxy=conf.neutron.service_metadata_proxy,
            shared_secret=conf.neutron.metadata_proxy_shared_secret,
            forwarded_for=conf.oslo_middleware.enable_proxy_headers_parsing,
        )
        return cls(proxy, VendordataSettings.from_conf(conf), conf.api.metadata_cache_expiration)


@dataclass(frozen=True)
class Served:
    """A server's documents and where it lives (what the cache keeps)."""

    located: Located
    tree: MetadataTree


async def _lifespan_only(scope: Scope, receive: Receive, send: Send) -> None:
    """The fallback of a metadata service on its own: lifespan, and 404 for anything else."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    elif scope["type"] == "http":
        await _send(send, 404, MetadataHttpError(404).body())


class MetadataApp(PrefixedApp):
    """Serves ``prefix`` ("" for the whole host) and hands every other request to
    ``fallback``."""

    def __init__(
        self,
        records: GuestRecords,
        settings: MetadataSettings,
        fallback: ASGIApp = _lifespan_only,
        prefix: str = "",
        clock: Clock | None = None,
        dynamic: DynamicVendordata | None = None,
        workers: int = 8,
    ) -> None:
        super().__init__(fallback, Workers(workers, "metadata"))
        self.prefix = prefix
        self.records = records
        self.settings = settings
        self.clock = clock or SystemClock()
        self.cache: ExpiringCache[Served] = ExpiringCache(settings.cache_seconds, self.clock)
        self.dynamic = dynamic or DynamicVendordata(settings.vendordata)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"][len(self.prefix) :] or "/"
        try:
            status, body, content_type = await self._answer(scope, receive, path)
        except MetadataHttpError as exc:
            status, body, content_type = exc.status, exc.body(), "text/plain"
        except Exception:
            LOG.exception("metadata request %s failed", path)
            status, body, content_type = 500, MetadataHttpError(500, UNKNOWN_ERROR).body(), "text/plain"  # fmt: skip
        await _send(send, status, body if scope["method"] != "HEAD" else b"", content_type)

    async def _answer(self, scope: Scope, receive: Receive, path: str) -> tuple[int, bytes, str]:
        if posixpath.normpath(path) == "/":
            return 200, "\n".join([*EC2_VERSIONS, LATEST]).encode(), "text/plain"
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        client = scope.get("client")
        requester = identify(self.settings.proxy, headers, client[0] if client else None)
        served = await self.workers.run(self._served, requester)
        try:
            answer = served.tree.lookup(path, today=self.clock.now().strftime("%Y-%m-%d"))
        except NoSuchPath as exc:
            raise MetadataHttpError(404) from exc
        if answer.password:
            return await self._password(scope, receive, served, answer)
        return 200, answer.body, answer.content_type

    # --- finding the server ------------------------------------------------------------------

    def _served(self, requester: Requester) -> Served:
        """The requester's server (404 when there is none or the tenant does not match)."""
        if requester.instance_id is not None:
            key = f"metadata-{requester.instance_id}"
            uuid: str | None = requester.instance_id
        else:
            if not requester.address:
                raise MetadataHttpError(404)
            key = f"metadata-{requester.address}"
            uuid = None
        served = self.cache.get(key)
        if served is None:
            try:
                if uuid is None:
                    uuid = self.records.uuid_with_address(requester.address or "")
                located = self.records.find(uuid) if uuid is not None else None
            except Exception as exc:
                LOG.exception("Failed to get metadata for %s", key)
                raise MetadataHttpError(500, UNKNOWN_ERROR) from exc
            if located is None:
                LOG.error("Failed to get metadata for %s: no metadata", key)
                raise MetadataHttpError(404)
            served = Served(located, self._tree(located, requester.address))
            self.cache.keep(key, served)
        if (
            requester.tenant_id is not None
            and served.located.record.project_id != requester.tenant_id
        ):
            LOG.warning("Tenant_id %s does not match tenant_id of instance %s.",
                        requester.tenant_id, requester.instance_id)  # fmt: skip
            raise MetadataHttpError(404)
        return served

    def _tree(self, located: Located, address: str | None) -> MetadataTree:
        request = VendordataRequest.for_record(located.record)

        def dynamic() -> dict[str, Any]:
            try:
                return self.dynamic.fetch(request)
            except VendordataError as exc:
                raise MetadataHttpError(500, UNKNOWN_ERROR) from exc

        vendor = VendorData(static_vendordata(self.settings.vendordata), dynamic,
                            self.settings.vendordata.providers)  # fmt: skip
        return MetadataTree(located.record, vendor, address)

    # --- the password ------------------------------------------------------------------------

    async def _password(
        self, scope: Scope, receive: Receive, served: Served, answer: Answer
    ) -> tuple[int, bytes, str]:
        method = scope["method"]
        if method in ("GET", "HEAD"):
            return 200, answer.body, "text/plain"
        if method != "POST":
            raise MetadataHttpError(400, "GET and POST only are supported.")
        if served.located.record.password:
            raise MetadataHttpError(409)
        try:
            body = await read_body(receive, password.MAX_SIZE)
        except BodyTooLarge as exc:
            raise MetadataHttpError(400, "Request is too large.") from exc
        text = body.decode("utf-8", "replace")
        await self.workers.run(self._store, served, text)
        return 200, b"", "text/plain"

    def _store(self, served: Served, encrypted: str) -> None:
        try:
            self.records.save_password(served.located, encrypted)
        except LookupError as exc:
            raise MetadataHttpError(400, f"Instance {served.located.record.uuid} could not be found.") from exc  # fmt: skip
        # The next request reads the stored password (Nova's cache would answer the old one).
        self.cache.forget(lambda s: s.located.record.uuid == served.located.record.uuid)


async def _send(send: Send, status: int, body: bytes, content_type: str = "text/plain") -> None:
    headers = [(b"content-type", f"{content_type}; charset=UTF-8".encode()),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_metadata_app(
    conf: cfg.ConfigOpts,
    records: GuestRecords,
    fallback: ASGIApp | None = None,
    prefix: str = "",
) -> MetadataApp:
    """The metadata service configured by ``conf``; under ``prefix`` in front of
    ``fallback`` (the all-in-one), or alone."""
    return MetadataApp(
        records, MetadataSettings.from_conf(conf), fallback or _lifespan_only, prefix
    )
