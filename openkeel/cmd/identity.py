"""The embedded identity service wired into an API process (``[api] auth_strategy = embedded``).

The identity API (:mod:`openkeel.identity_api`) and the compute API are independent roles; this
composition root joins them: the compute API (and the image API, which shares its
authenticator) validates tokens by asking the identity service in process, through the same
cache the Keystone validation uses, and the cache is cleared whenever this process changes an
identity record (decision 0040).
"""

from __future__ import annotations

import datetime
import secrets
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.api.keystone import CachedTokenAuth, TokenIdentity
from openkeel.conf.glance import locates_glance
from openkeel.db.identity_store import DEFAULT_DOMAIN_ID, IdentityStore
from openkeel.identity_api.app import build_identity_app
from openkeel.identity_api.catalog import CatalogEntry
from openkeel.identity_api.faults import Unauthorized
from openkeel.identity_api.request import PREFIX
from openkeel.identity_api.service import IdentityService

ADMIN_PASSWORD_FILE = "admin-password"


def catalog(conf: cfg.ConfigOpts, image_api: bool) -> tuple[CatalogEntry, ...]:
    """What this process serves (compute, identity, the embedded image, network and volume APIs
    of the all-in-one) and, when configured, where Glance is."""
    entries = [
        CatalogEntry("compute", "nova", "/v2.1"),
        CatalogEntry("identity", "keystone", PREFIX),
    ]
    if image_api and conf.openkeel_network.backend == "flat":
        entries.append(CatalogEntry("network", "neutron", "/networking"))
    if image_api:
        # As devstack registers Cinder: the official type, and the alias Nova looks up.
        entries.append(CatalogEntry("block-storage", "cinder", "/volume/v3"))
        entries.append(CatalogEntry("volumev3", "cinderv3", "/volume/v3"))
    glance = conf.glance
    if image_api and not locates_glance(glance):
        entries.append(CatalogEntry("image", "glance", "/image"))
    elif glance.endpoint_override or glance.api_servers:
        entries.append(
            CatalogEntry("image", "glance", glance.endpoint_override or glance.api_servers[0])
        )
    return tuple(entries)


def identity_service(conf: cfg.ConfigOpts, api_db: sa.Engine, image_api: bool) -> IdentityService:
    """The identity service over the API database (tables created when missing)."""
    store = IdentityStore(api_db)
    store.install()
    return IdentityService(store, catalog(conf, image_api), conf.identity.token_expiration)


def authenticator(conf: cfg.ConfigOpts, service: IdentityService, url: str) -> CachedTokenAuth:
    """The compute API's authenticator over ``service``; ``url`` is where clients reach this
    process (for ``WWW-Authenticate``)."""

    def validate(token: str) -> TokenIdentity | None:
        try:
            caller = service.validate(token)
        except Unauthorized:
            return None
        expires = caller.payload.expires_at.replace(tzinfo=datetime.UTC).timestamp()
        return TokenIdentity(
            user_id=caller.user.id,
            project_id=caller.project.id if caller.project else None,
            roles=caller.role_names,
            system_scope="all" if caller.payload.system else None,
            domain_id=None,
            user_domain_id=DEFAULT_DOMAIN_ID,
            project_domain_id=DEFAULT_DOMAIN_ID if caller.project else None,
            service_catalog=(),
            expires_at=expires,
        )

    auth = CachedTokenAuth(validate, url + PREFIX, float(conf.identity.token_cache_time))
    service.on_change(auth.forget)
    return auth


def with_identity_api(app: Any, service: IdentityService) -> Any:
    """``app`` with the identity API under ``/identity``."""
    return build_identity_app(app, service)


def admin_password(root: Path) -> str:
    """The all-in-one's admin password: made on first start, kept in the data directory
    (mode 0600) so every start writes the same clouds.yaml."""
    path = root / ADMIN_PASSWORD_FILE
    if path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(12)
    path.touch(mode=0o600)
    path.write_text(password + "\n")
    return password
