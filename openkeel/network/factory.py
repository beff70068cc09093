"""Pick the network adapter from ``[openkeel_network] backend`` (called by the role wiring and
the servers API).

An adapter is made once per (configuration, API database) and kept on the engine: the flat
adapter checks its tables and networks when made, which a server create must not pay for each
time.
"""

from __future__ import annotations

import threading

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.network.adapter import NetworkAdapter, NoNetwork

_ATTRIBUTE = "_openkeel_network_adapter"
_LOCK = threading.Lock()


def get_network_adapter(conf: cfg.ConfigOpts, api_db: sa.Engine) -> NetworkAdapter:
    """``none`` -> NoNetwork; ``flat`` -> the embedded network on the API database;
    ``neutron`` -> the neutron-server ``[neutron]`` locates."""
    backend = conf.openkeel_network.backend
    if backend == "none":
        return NoNetwork()
    with _LOCK:
        made = getattr(api_db, _ATTRIBUTE, None)
        if made is not None and made[0] is conf:
            adapter: NetworkAdapter = made[1]
            return adapter
    if backend == "neutron":
        from openkeel.network.neutron import NeutronNetwork

        adapter = NeutronNetwork(conf)
    else:
        from openkeel.network.flat import FlatNetwork

        adapter = FlatNetwork(conf, api_db)
    with _LOCK:
        setattr(api_db, _ATTRIBUTE, (conf, adapter))
    return adapter
