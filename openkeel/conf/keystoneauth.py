"""keystoneauth1's options for a service section (``[neutron]``, ``[cinder]``) and the auth
plugin they describe: what Nova registers with ``ks_loading.register_session_conf_options`` and
``register_auth_conf_options``."""

from __future__ import annotations

import copy
import functools
from typing import Any

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg


@functools.cache
def session_and_auth_opts() -> tuple[cfg.Opt, ...]:
    """keystoneauth1's session and auth options with the password plugin's (none required:
    only a deployment using the peer service needs them); made once (entry points)."""
    password = []
    for opt in ks_loading.get_auth_plugin_conf_options("password"):
        opt = copy.copy(opt)
        opt.required = False
        password.append(opt)
    return (
        *ks_loading.get_session_conf_options(),
        *ks_loading.get_auth_common_conf_options(),
        *password,
    )


def load_auth(conf: cfg.ConfigOpts, group: str) -> Any:
    """The auth plugin ``[group] auth_type`` and its options name, or None without one."""
    section = conf[group]
    if not section.auth_type:
        return None
    loader: Any = ks_loading.get_plugin_loader(section.auth_type)
    values = {}
    for opt in loader.get_options():
        try:
            values[opt.dest] = getattr(section, opt.dest)
        except cfg.NoSuchOptError:
            continue
    return loader.load_from_options(**{k: v for k, v in values.items() if v is not None})
