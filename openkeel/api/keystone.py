"""Keystone token validation for the compute API (``[api] auth_strategy = keystone``).

Built once per app by :func:`openkeel.api.factory.build_authenticator`; the app calls
:meth:`KeystoneAuth.authenticate` for every request under ``/v2`` and ``/v2.1``. The caller's
``X-Auth-Token`` is validated with ``GET /v3/auth/tokens`` (``X-Subject-Token``) as the service
user of ``[keystone_authtoken]`` (keystoneauth1 session + password plugin), turned into a typed
:class:`RequestContext` and cached (bounded, TTL ``token_cache_time``, never past the token's
expiry). A cache hit costs one dict look-up under a lock; a miss does blocking HTTP.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keystoneauth1 import access, session
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1.identity import generic
from oslo_config import cfg

from openkeel.api.context import RequestContext
from openkeel.domain.errors import ServiceUnavailable, Unauthorized

LOG = logging.getLogger(__name__)

UNAUTHORIZED_MESSAGE = "The request you have made requires authentication."
UNAVAILABLE_MESSAGE = "The Keystone service is temporarily unavailable."
# The catalog entries Nova keeps in its context (for calls made on the user's behalf).
CATALOG_TYPES = frozenset(
    {
        "image",
        "block-storage",
        "volumev3",
        "key-manager",
        "placement",
        "network",
        "accelerator",
        "sharev2",
    }
)
DEFAULT_CACHE_SIZE = 10_000


class KeystoneUnauthorized(Unauthorized):
    """401 with keystonemiddleware's message; the app adds ``WWW-Authenticate`` from it."""

    def __init__(self, www_authenticate_uri: str) -> None:
        super().__init__(UNAUTHORIZED_MESSAGE)
        self.www_authenticate_uri = www_authenticate_uri


@dataclass(frozen=True)
class TokenIdentity:
    """What a validated token says about its holder; immutable so it can be cached."""

    user_id: str
    project_id: str | None
    roles: tuple[str, ...]
    system_scope: str | None
    domain_id: str | None
    user_domain_id: str | None
    project_domain_id: str | None
    service_catalog: tuple[dict[str, Any], ...]
    expires_at: float  # POSIX seconds

    def context(self, request_id: str, token: str) -> RequestContext:
        """A fresh (mutable) request context for one request."""
        return RequestContext(
            user_id=self.user_id,
            project_id=self.project_id,
            roles=self.roles,
            request_id=request_id,
            auth_token=token,
            system_scope=self.system_scope,
            domain_id=self.domain_id,
            user_domain_id=self.user_domain_id,
            project_domain_id=self.project_domain_id,
            service_catalog=self.service_catalog,
        )


CACHE_MISS = object()


class TokenCache:
    """A thread-safe LRU of validation results keyed by the token's SHA-256.

    ``None`` is cached too: a token Keystone rejected stays rejected until the entry expires.
    """

    def __init__(self, max_size: int, ttl: float, clock: Callable[[], float]) -> None:
        self._max_size = max_size
        self._ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, TokenIdentity | None]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def get(self, token: str) -> object:
        """The cached identity, ``None`` for a cached rejection, or ``CACHE_MISS``."""
        key = self._key(token)
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return CACHE_MISS
            deadline, identity = entry
            if now >= deadline:
                del self._entries[key]
                return CACHE_MISS
            self._entries.move_to_end(key)
            return identity

    def put(self, token: str, identity: TokenIdentity | None) -> None:
        """Remember a result for ``ttl`` seconds, but never past the token's expiry."""
        if self._ttl <= 0 or self._max_size <= 0:
            return
        deadline = self._clock() + self._ttl
        if identity is not None:
            deadline = min(deadline, identity.expires_at)
        key = self._key(token)
        with self._lock:
            self._entries[key] = (deadline, identity)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class CachedTokenAuth:
    """An :class:`openkeel.api.auth.Authenticator` over a token validation function, with the
    results cached: Keystone's over HTTP (:class:`KeystoneAuth`), or the embedded identity
    service's in process (built by the composition root)."""

    def __init__(
        self,
        validate: Callable[[str], TokenIdentity | None],
        www_authenticate_uri: str,
        cache_ttl: float,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._validate_token = validate
        self.www_authenticate_uri = www_authenticate_uri
        self._clock = clock
        self._cache = TokenCache(cache_size, cache_ttl, clock)

    def forget(self) -> None:
        """Drop every cached validation (the identity behind the tokens changed)."""
        self._cache.clear()

    def authenticate(self, headers: dict[str, str], request_id: str) -> RequestContext:
        """Validate the caller's token (cache first, else the validation function) and build
        the context.

        May block on a cache miss (Keystone: one HTTP round trip, plus the service user's own
        token the first time): an ASGI caller should run it in its executor, after trying
        :meth:`authenticate_cached` on the event loop.
        """
        context = self.authenticate_cached(headers, request_id)
        if context is not None:
            return context
        token = _token_of(headers)
        identity = self._validate_token(token)
        if identity is not None and identity.expires_at <= self._clock():
            identity = None
        self._cache.put(token, identity)
        if identity is None:
            raise KeystoneUnauthorized(self.www_authenticate_uri)
        return identity.context(request_id, token)

    def authenticate_cached(
        self, headers: dict[str, str], request_id: str
    ) -> RequestContext | None:
        """The context from the cache alone, without I/O; ``None`` when the token must be
        validated.

        Raises :class:`KeystoneUnauthorized` for a missing token or a cached rejection.
        """
        token = _token_of(headers)
        if not token:
            raise KeystoneUnauthorized(self.www_authenticate_uri)
        identity = self._cache.get(token)
        if identity is CACHE_MISS:
            return None
        if not isinstance(identity, TokenIdentity):
            raise KeystoneUnauthorized(self.www_authenticate_uri)
        return identity.context(request_id, token)


class KeystoneAuth(CachedTokenAuth):
    """The :class:`openkeel.api.auth.Authenticator` of real deployments."""

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        *,
        ks_session: session.Session | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        opts = conf.keystone_authtoken
        if not opts.auth_url:
            raise ValueError("[keystone_authtoken] auth_url is required")
        super().__init__(
            self._validate,
            opts.www_authenticate_uri or opts.auth_url,
            float(opts.token_cache_time),
            cache_size=cache_size,
            clock=clock,
        )
        self._session = ks_session or service_session(opts)
        self._tokens_url = identity_v3_url(opts.auth_url) + "/auth/tokens"
        if not opts.include_service_catalog:
            self._tokens_url += "?nocatalog"
        self._retries: int = opts.http_request_max_retries
        self._calls_lock = threading.Lock()
        self.keystone_calls = 0  # validations sent to Keystone (tests and metrics read it)

    def _validate(self, token: str) -> TokenIdentity | None:
        """Ask Keystone about ``token``: the identity, or ``None`` when it is not valid."""
        with self._calls_lock:
            self.keystone_calls += 1
        try:
            resp = self._session.get(
                self._tokens_url,
                headers={"X-Subject-Token": token},
                authenticated=True,
                raise_exc=False,
                connect_retries=self._retries,
            )
        except ksa_exceptions.ClientException as exc:
            LOG.error("Unable to validate token: %s", exc)
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE) from exc
        if resp.status_code == 404:
            LOG.info("Keystone rejected a token: %s", resp.text)
            return None
        if resp.status_code != 200:
            LOG.error("Token validation answered %s: %s", resp.status_code, resp.text)
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE)
        return identity_from_access(access.create(resp=resp))


def _token_of(headers: dict[str, str]) -> str:
    return (headers.get("x-auth-token") or headers.get("x-storage-token") or "").strip()


def service_session(opts: Any) -> session.Session:
    """A keystoneauth session authenticated as the ``[keystone_authtoken]`` service user."""
    if opts.auth_type not in ("password", "v3password"):
        raise ValueError(f"[keystone_authtoken] auth_type {opts.auth_type!r} is not supported")
    plugin = generic.Password(
        auth_url=opts.auth_url,
        username=opts.username,
        password=opts.password,
        project_name=opts.project_name,
        user_domain_id=opts.user_domain_id,
        user_domain_name=None if opts.user_domain_id else opts.user_domain_name,
        project_domain_id=opts.project_domain_id,
        project_domain_name=None if opts.project_domain_id else opts.project_domain_name,
    )
    verify: bool | str = opts.cafile or True
    if opts.insecure:
        verify = False
    return session.Session(auth=plugin, verify=verify, timeout=opts.http_connect_timeout)


def identity_v3_url(auth_url: str) -> str:
    """The identity v3 root for ``auth_url`` (``http://ks:5000`` or ``http://ks:5000/v3``)."""
    url = auth_url.rstrip("/")
    return url if url.endswith("/v3") else url + "/v3"


def identity_from_access(info: access.AccessInfo) -> TokenIdentity | None:
    """The cached form of Keystone's token document (``None`` without a user: Nova's 401)."""
    if not info.user_id:
        return None
    catalog: tuple[dict[str, Any], ...] = ()
    if info.has_service_catalog():
        catalog = v2_catalog(info.service_catalog.catalog)
    expires = info.expires
    return TokenIdentity(
        user_id=info.user_id,
        project_id=info.project_id,
        roles=tuple(info.role_names or ()),
        system_scope="all" if info.system_scoped else None,
        domain_id=info.domain_id,
        user_domain_id=info.user_domain_id,
        project_domain_id=info.project_domain_id,
        service_catalog=catalog,
        expires_at=expires.timestamp() if expires is not None else float("inf"),
    )


def v2_catalog(catalog: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The v2-shaped catalog keystonemiddleware hands Nova, filtered to Nova's types.

    One endpoint entry per region with ``publicURL``/``internalURL``/``adminURL`` keys.
    """
    services: list[dict[str, Any]] = []
    for entry in catalog:
        if entry.get("type") not in CATALOG_TYPES:
            continue
        service: dict[str, Any] = {"type": entry["type"]}
        if "name" in entry:
            service["name"] = entry["name"]
        regions: dict[str | None, dict[str, str]] = {}
        for endpoint in entry.get("endpoints", []):
            region = endpoint.get("region")
            slot = regions.setdefault(region, {"region": region} if region else {})
            slot[endpoint["interface"].lower() + "URL"] = endpoint["url"]
        service["endpoints"] = list(regions.values())
        services.append(service)
    return tuple(services)
