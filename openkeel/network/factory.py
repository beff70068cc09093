"""Pick the network adapter from ``[openkeel_network] backend`` (called by the role wiring)."""

from __future__ import annotations

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.network.adapter import NetworkAdapter, NoNetwork


def get_network_adapter(conf: cfg.ConfigOpts, api_db: sa.Engine) -> NetworkAdapter:
    """``none`` -> NoNetwork; ``flat`` -> the embedded flat network on the API database."""
    backend = conf.openkeel_network.backend
    if backend == "none":
        return NoNetwork()
    from openkeel.network.flat import FlatNetwork

    return FlatNetwork(conf, api_db)
