"""``[neutron]`` options (Nova's names: keystoneauth1's auth, session and adapter options plus
Nova's own) and the ``[DEFAULT]`` VIF plugging options.

Read by the Neutron network adapter (openkeel.network.neutron, ``[openkeel_network] backend =
neutron``) and by compute's build, which waits for ``network-vif-plugged``.
"""

from __future__ import annotations

import functools

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from openkeel.conf.keystoneauth import session_and_auth_opts

GROUP = "neutron"

DEFAULT_OPTS = [
    cfg.BoolOpt(
        "vif_plugging_is_fatal",
        default=True,
        help="Fail the boot when the network service does not report the VIFs plugged in time.",
    ),
    cfg.IntOpt(
        "vif_plugging_timeout",
        default=300,
        min=0,
        help="Seconds to wait for network-vif-plugged events after plugging VIFs (0: no wait).",
    ),
]

OPTS = [
    cfg.StrOpt("ovs_bridge", default="br-int", help="OVS bridge of VIFs Neutron binds to OVS."),
    cfg.StrOpt("default_floating_pool", default="public", help="Default floating IP pool."),
    cfg.IntOpt("http_retries", default=3, min=0, help="Retries of idempotent Neutron calls."),
]


@functools.cache
def _keystoneauth_opts() -> list[cfg.Opt]:
    """keystoneauth1's session, auth and adapter options; made once (entry points)."""
    return [
        *session_and_auth_opts(),
        *ks_loading.get_adapter_conf_options(include_deprecated=False),
    ]


def register(conf: cfg.ConfigOpts) -> None:
    """Register ``[neutron]`` and the ``[DEFAULT]`` VIF plugging options."""
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(OPTS, group=GROUP)
    conf.register_opts(_keystoneauth_opts(), group=GROUP)
    conf.set_default("service_type", "network", group=GROUP)
    conf.set_default("valid_interfaces", ["internal", "public"], group=GROUP)
