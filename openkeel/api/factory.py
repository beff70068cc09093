"""Builds the compute API ASGI app from settings: routes, auth, policy, databases."""

from __future__ import annotations

import importlib
import pkgutil

from oslo_config import cfg

from openkeel.api import resources, unbuilt
from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import Authenticator, NoAuth
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.routing import RouteTable
from openkeel.api.services import ApiServices


def build_routes() -> RouteTable:
    """Every resource's routes, discovered from ``openkeel.api.resources``, then Nova's routes
    not built yet (501)."""
    table = RouteTable()
    for info in sorted(pkgutil.iter_modules(resources.__path__), key=lambda m: m.name):
        if info.ispkg:
            module = importlib.import_module(f"{resources.__name__}.{info.name}.routes")
            module.register(table)
    unbuilt.register(table)
    return table


def build_authenticator(conf: cfg.ConfigOpts) -> Authenticator:
    """NoAuth or Keystone token validation, per ``[api] auth_strategy``."""
    if conf.api.auth_strategy == "noauth2":
        return NoAuth()
    if conf.api.auth_strategy == "embedded":
        raise ValueError(
            "[api] auth_strategy = embedded: the command serving the API builds the identity "
            "service and passes its authenticator"
        )
    from openkeel.api.keystone import KeystoneAuth

    return KeystoneAuth(conf)


def build_api_app(
    services: ApiServices, authenticator: Authenticator | None = None
) -> ComputeApiApp:
    """The ASGI app serving /, /v2 and /v2.1; ``authenticator`` when the composition root
    built one (the embedded identity service's), else per ``[api] auth_strategy``."""
    conf = services.conf
    return ComputeApiApp(
        routes=build_routes(),
        authenticator=authenticator or build_authenticator(conf),
        enforcer=PolicyEnforcer(conf),
        services=services,
        workers=conf.wsgi.default_pool_size,
        inline_bounded=local_databases(services),
    )


def local_databases(services: ApiServices) -> bool:
    """True when every database is a SQLite file: reading one never waits on a network or,
    with WAL, on a writer, so a bounded read may run on the event loop (decision 0024)."""
    engines = [services.api_db, *(services.cell_dbs or {}).values()]
    return all(engine.dialect.name == "sqlite" for engine in engines)
