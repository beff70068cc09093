"""The image service adapter: a typed interface and its Glance v2 REST implementation.

:class:`GlanceClient` talks to Glance over a keystoneauth1 session with the caller's token,
at the configured endpoints or the one the caller's service catalog names.

The compute API's ``/images`` proxy and the build path call an :class:`ImageService`: the
:class:`GlanceClient` when ``[glance]`` locates Glance (decision 0034), else the embedded
catalog (:mod:`openkeel.db.image_catalog`). Errors are this module's own classes; callers
translate them to Nova's API faults.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import plugin as ksa_plugin
from keystoneauth1 import session as ksa_session
from keystoneauth1.access import service_catalog

from openkeel.conf.glance import locates_glance


class ImageError(Exception):
    """Base of the image adapter's errors."""


class ImageNotFound(ImageError):
    """The image does not exist or is not visible to the caller."""

    def __init__(self, image_id: str) -> None:
        super().__init__(f"Image {image_id} could not be found.")
        self.image_id = image_id


class ImageNotAuthorized(ImageError):
    """The image service refused the operation (Glance's 403)."""

    def __init__(self, image_id: str) -> None:
        super().__init__(f"Not authorized for image {image_id}.")
        self.image_id = image_id


class ImageBadRequest(ImageError):
    """The image service rejected the query (bad marker, filter or sort key)."""


class ImageServiceUnavailable(ImageError):
    """The image service could not be reached after the configured retries."""


@dataclass(frozen=True)
class Caller:
    """Who asks: image visibility and permissions depend on it."""

    project_id: str | None
    is_admin: bool = False
    auth_token: str | None = None
    # The token's v2-shaped service catalog (Keystone mode): where Glance is, when not fixed.
    service_catalog: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Image:
    """An image as Glance v2 describes it; ``properties`` holds the non-core attributes."""

    id: str
    name: str | None
    status: str
    visibility: str = "public"
    owner: str | None = None
    min_ram: int = 0
    min_disk: int = 0
    size: int | None = None
    checksum: str | None = None
    container_format: str | None = None
    disk_format: str | None = None
    protected: bool = False
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    os_hidden: bool = False
    os_hash_algo: str | None = None
    os_hash_value: str | None = None
    virtual_size: int | None = None


@dataclass(frozen=True)
class ImageData:
    """What a snapshot uploads into a queued image: its formats and its bytes.

    ``chunks`` None means the data stays in the hypervisor's storage (a KubeVirt snapshot is a
    DataSource in the cluster); only the embedded catalog can activate such an image, with
    ``size`` as its size (decision 0051).
    """

    disk_format: str
    container_format: str
    chunks: Iterable[bytes] | None
    size: int = 0
    properties: Mapping[str, Any] = field(default_factory=dict)


class ImageService(Protocol):
    """What the compute services need from an image service."""

    def get(self, caller: Caller, image_id: str) -> Image:
        """The image, or ImageNotFound."""

    def list(
        self,
        caller: Caller,
        filters: Mapping[str, str],
        limit: int | None = None,
        marker: str | None = None,
        sort: Sequence[tuple[str, str]] = (("created_at", "desc"), ("id", "desc")),
    ) -> list[Image]:
        """Visible images matching Glance v2 ``filters`` (core keys or property names)."""

    def delete(self, caller: Caller, image_id: str) -> None:
        """Delete the image (ImageNotFound, ImageNotAuthorized)."""

    def update_properties(
        self, caller: Caller, image_id: str, properties: Mapping[str, Any], purge: bool
    ) -> Image:
        """Set ``properties``; with ``purge`` also remove the properties not named."""

    def create(self, caller: Caller, image: Image) -> Image:
        """Register a queued image (no data yet) owned by the caller's project; a ``shared``
        image with an ``instance_owner`` property is shared with that project (Nova's
        snapshot of another project's server)."""

    def upload(self, caller: Caller, image_id: str, data: ImageData) -> Image:
        """Set the formats, store the data and make the image active."""


# Glance v2 image attributes that are not custom properties.
CORE_KEYS = frozenset(
    {
        "id", "name", "status", "visibility", "owner", "min_ram", "min_disk", "size",
        "checksum", "container_format", "disk_format", "protected", "created_at",
        "updated_at", "tags", "file", "schema", "self", "direct_url", "locations",
        "os_hidden", "os_hash_algo", "os_hash_value", "virtual_size", "stores",
    }
)  # fmt: skip


def parse_time(text: str | None) -> datetime.datetime | None:
    """Glance's ISO 8601 timestamps (``2011-01-01T01:02:03Z``) as naive UTC datetimes."""
    if not text:
        return None
    parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
    return parsed


def image_from_glance(body: Mapping[str, Any]) -> Image:
    """An :class:`Image` from a Glance v2 image document."""
    return Image(
        id=body["id"],
        name=body.get("name"),
        status=body.get("status", "queued"),
        visibility=body.get("visibility", "shared"),
        owner=body.get("owner"),
        min_ram=int(body.get("min_ram") or 0),
        min_disk=int(body.get("min_disk") or 0),
        size=body.get("size"),
        checksum=body.get("checksum"),
        container_format=body.get("container_format"),
        disk_format=body.get("disk_format"),
        protected=bool(body.get("protected", False)),
        created_at=parse_time(body.get("created_at")),
        updated_at=parse_time(body.get("updated_at")),
        properties={k: v for k, v in body.items() if k not in CORE_KEYS},
        tags=tuple(body.get("tags") or ()),
        os_hidden=bool(body.get("os_hidden", False)),
        os_hash_algo=body.get("os_hash_algo"),
        os_hash_value=body.get("os_hash_value"),
        virtual_size=body.get("virtual_size"),
    )


def glance_filters(filters: Mapping[str, str]) -> dict[str, str]:
    """Nova's proxy filters in Glance v2 terms: ``property-x`` -> ``x``,
    ``changes-since`` -> ``updated_at=gte:...``."""
    out: dict[str, str] = {}
    for key, value in filters.items():
        if key.startswith("property-"):
            out[key.removeprefix("property-")] = value
        elif key == "changes-since":
            out["updated_at"] = f"gte:{value}"
        else:
            out[key] = value
    return out


# (method, url, headers, body) -> (status, body bytes); raises OSError when unreachable.
# The body: bytes, or chunks streamed once (an image upload; chunked transfer encoding).
Transport = Callable[[str, str, dict[str, str], bytes | Iterable[bytes] | None], tuple[int, bytes]]


def session_transport(session: Any) -> Transport:
    """The default transport: a keystoneauth1 ``Session`` (its TLS settings, timeout, user
    agent and request logging), with the caller's token already in the headers."""

    def send(
        method: str, url: str, headers: dict[str, str], body: bytes | Iterable[bytes] | None
    ) -> tuple[int, bytes]:
        try:
            resp = session.request(
                url,
                method,
                headers=headers,
                data=body,
                authenticated=False,
                raise_exc=False,
                connect_retries=0,
            )
        except ksa_exceptions.ConnectionError as exc:
            raise ConnectionError(str(exc)) from exc
        return int(resp.status_code), bytes(resp.content or b"")

    return send


class CallerAuth(ksa_plugin.BaseAuthPlugin):
    """The caller's own token and service catalog, as Nova's context auth plugin: Glance acts
    for the user who asked, and its endpoint is the one the user's token lists."""

    def __init__(self, caller: Caller) -> None:
        super().__init__()
        self._caller = caller

    def get_token(self, session: Any, **kwargs: Any) -> str | None:
        """The caller's token."""
        return self._caller.auth_token

    def get_endpoint(
        self,
        session: Any,
        service_type: str | None = None,
        interface: Any = None,
        region_name: str | None = None,
        **kwargs: Any,
    ) -> str | None:
        """The endpoint of ``service_type`` in the caller's (v2-shaped) catalog, or None."""
        catalog = service_catalog.ServiceCatalogV2(list(self._caller.service_catalog))
        try:
            url: str | None = catalog.url_for(
                service_type=service_type, interface=interface, region_name=region_name
            )
        except ksa_exceptions.EndpointNotFound:
            return None
        return url


@dataclass(frozen=True)
class CatalogLookup:
    """Where to find Glance in the caller's service catalog (``[glance]`` options)."""

    interfaces: tuple[str, ...] = ("internal", "public")
    region_name: str | None = None


class GlanceClient:
    """Glance v2 over a keystoneauth1 session with the caller's token; retries unreachable
    and 503 endpoints. Endpoints are fixed (``[glance] endpoint_override``/``api_servers``) or,
    without them, the image endpoint of the caller's service catalog."""

    def __init__(
        self,
        endpoints: Sequence[str] = (),
        num_retries: int = 3,
        transport: Transport | None = None,
        *,
        session: Any = None,
        lookup: CatalogLookup | None = None,
    ) -> None:
        self._endpoints = [e.rstrip("/") for e in endpoints]
        self._lookup = lookup or CatalogLookup()
        self._retries = num_retries
        self._session = session if session is not None else ksa_session.Session()
        self._send = transport or session_transport(self._session)

    def _endpoints_for(self, caller: Caller) -> list[str]:
        if self._endpoints:
            return self._endpoints
        url = self._session.get_endpoint(
            auth=CallerAuth(caller),
            service_type="image",
            interface=list(self._lookup.interfaces),
            region_name=self._lookup.region_name,
        )
        if not url:
            raise ImageServiceUnavailable("No image endpoint in the service catalog")
        # Catalogs list Glance with or without its version; requests name /v2 themselves.
        return [url.rstrip("/").removesuffix("/v2")]

    def _call(
        self, caller: Caller, method: str, path: str, body: Any = None, patch: bool = False
    ) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        if caller.auth_token:
            headers["X-Auth-Token"] = caller.auth_token
        data = None
        if body is not None:
            headers["Content-Type"] = (
                "application/openstack-images-v2.1-json-patch" if patch else "application/json"
            )
            data = json.dumps(body).encode()
        endpoints = self._endpoints_for(caller)
        for attempt in range(self._retries + 1):
            endpoint = endpoints[attempt % len(endpoints)]
            try:
                status, raw = self._send(method, f"{endpoint}{path}", headers, data)
            except OSError:
                continue
            if status == 503:
                continue
            return status, json.loads(raw) if raw else None
        raise ImageServiceUnavailable(f"Image service unavailable after {self._retries + 1} tries")

    def _put_data(self, caller: Caller, path: str, chunks: Iterable[bytes]) -> int:
        """PUT the image data. Chunks given as a list or tuple are one body, resent on a retry;
        any other iterable (a hypervisor's export, decision 0071) is streamed, never held
        whole in memory, and so retried only while none of it was read."""
        headers = {"Content-Type": "application/octet-stream"}
        if caller.auth_token:
            headers["X-Auth-Token"] = caller.auth_token
        stream = None if isinstance(chunks, list | tuple) else _OnceStream(chunks)
        data = b"".join(chunks) if stream is None else b""
        for attempt in range(self._retries + 1):
            endpoints = self._endpoints_for(caller)
            url = f"{endpoints[attempt % len(endpoints)]}{path}"
            try:
                status, _raw = self._send("PUT", url, headers, data if stream is None else stream)
            except OSError:
                if stream is not None and stream.started:
                    raise ImageServiceUnavailable(
                        "Image service connection lost during the upload"
                    ) from None
                continue
            if status != 503 or (stream is not None and stream.started):
                return status
        raise ImageServiceUnavailable(f"Image service unavailable after {self._retries + 1} tries")

    def _checked(self, status: int, image_id: str, payload: Any) -> Any:
        if status == 404:
            raise ImageNotFound(image_id)
        if status in (401, 403):
            raise ImageNotAuthorized(image_id)
        if status == 400:
            raise ImageBadRequest(json.dumps(payload) if payload else "Bad request")
        if status >= 300:
            raise ImageServiceUnavailable(f"Glance answered {status}")
        return payload

    def get(self, caller: Caller, image_id: str) -> Image:
        """GET /v2/images/{id}."""
        status, body = self._call(caller, "GET", f"/v2/images/{urllib.parse.quote(image_id)}")
        return image_from_glance(self._checked(status, image_id, body))

    def list(
        self,
        caller: Caller,
        filters: Mapping[str, str],
        limit: int | None = None,
        marker: str | None = None,
        sort: Sequence[tuple[str, str]] = (("created_at", "desc"), ("id", "desc")),
    ) -> list[Image]:
        """GET /v2/images, following Glance's ``next`` links until ``limit`` is reached."""
        params = dict(glance_filters(filters))
        params["sort"] = ",".join(f"{key}:{direction}" for key, direction in sort)
        if marker:
            params["marker"] = marker
        if limit:
            params["limit"] = str(limit)
        path: str | None = f"/v2/images?{urllib.parse.urlencode(params)}"
        images: list[Image] = []
        while path and (limit is None or len(images) < limit):
            status, body = self._call(caller, "GET", path)
            payload = self._checked(status, marker or "", body)
            images += [image_from_glance(item) for item in payload.get("images", [])]
            path = payload.get("next")
        return images[:limit] if limit else images

    def delete(self, caller: Caller, image_id: str) -> None:
        """DELETE /v2/images/{id}."""
        status, body = self._call(caller, "DELETE", f"/v2/images/{urllib.parse.quote(image_id)}")
        self._checked(status, image_id, body)

    def update_properties(
        self, caller: Caller, image_id: str, properties: Mapping[str, Any], purge: bool
    ) -> Image:
        """PATCH /v2/images/{id} with a JSON patch of the properties."""
        current = self.get(caller, image_id).properties
        ops: list[dict[str, Any]] = [
            {"op": "replace" if key in current else "add", "path": f"/{key}", "value": value}
            for key, value in properties.items()
        ]
        if purge:
            ops += [{"op": "remove", "path": f"/{key}"} for key in current if key not in properties]
        status, body = self._call(
            caller, "PATCH", f"/v2/images/{urllib.parse.quote(image_id)}", ops, patch=True
        )
        return image_from_glance(self._checked(status, image_id, body))

    def create(self, caller: Caller, image: Image) -> Image:
        """POST /v2/images (queued), then the instance owner as member of a shared image."""
        body: dict[str, Any] = {
            "name": image.name,
            "visibility": image.visibility,
            "min_ram": image.min_ram,
            "min_disk": image.min_disk,
            **{key: str(value) for key, value in image.properties.items()},
        }
        if image.id:
            body["id"] = image.id
        for key in ("disk_format", "container_format"):
            if getattr(image, key):
                body[key] = getattr(image, key)
        status, payload = self._call(caller, "POST", "/v2/images", body)
        created = image_from_glance(self._checked(status, image.id, payload))
        owner = image.properties.get("instance_owner")
        if image.visibility == "shared" and owner:
            path = f"/v2/images/{urllib.parse.quote(created.id)}/members"
            status, payload = self._call(caller, "POST", path, {"member": owner})
            self._checked(status, created.id, payload)
        return created

    def upload(self, caller: Caller, image_id: str, data: ImageData) -> Image:
        """PATCH the formats, PUT /v2/images/{id}/file; Glance keeps no data elsewhere."""
        if data.chunks is None:
            raise ImageBadRequest(
                f"Image {image_id}: Glance needs the image data; this snapshot's data stays in "
                "the hypervisor's storage."
            )
        quoted = urllib.parse.quote(image_id)
        current = self.get(caller, image_id).properties
        ops: list[dict[str, Any]] = [
            {"op": "replace", "path": "/disk_format", "value": data.disk_format},
            {"op": "replace", "path": "/container_format", "value": data.container_format},
        ]
        ops += [
            {"op": "replace" if key in current else "add", "path": f"/{key}", "value": str(value)}
            for key, value in data.properties.items()
        ]
        status, body = self._call(caller, "PATCH", f"/v2/images/{quoted}", ops, patch=True)
        self._checked(status, image_id, body)
        status = self._put_data(caller, f"/v2/images/{quoted}/file", data.chunks)
        self._checked(status, image_id, None)
        return self.get(caller, image_id)


class _OnceStream:
    """An upload body read at most once; says whether reading began."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = chunks
        self.started = False

    def __iter__(self) -> Iterator[bytes]:
        self.started = True
        yield from self._chunks


def glance_from_conf(glance: Any) -> GlanceClient | None:
    """Glance as ``[glance]`` locates it: fixed endpoints (``endpoint_override``,
    ``api_servers``), or with ``region_name`` alone the caller's service catalog (interfaces
    from ``valid_interfaces``); None when it does not locate Glance (decision 0034)."""
    if not locates_glance(glance):
        return None
    endpoints = [glance.endpoint_override] if glance.endpoint_override else glance.api_servers
    session = ksa_session.Session(timeout=glance.timeout, user_agent="openkeel")
    interfaces = tuple(i.strip() for i in glance.valid_interfaces.split(",") if i.strip())
    lookup = CatalogLookup(interfaces, glance.region_name)
    return GlanceClient(endpoints or (), glance.num_retries, session=session, lookup=lookup)
