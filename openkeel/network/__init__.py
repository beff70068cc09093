"""Network adapters: how compute gets ports and addresses for an instance.

``get_network_adapter(conf, api_db)`` picks the configured one (``[openkeel_network] backend``):
``none`` (instances get no network), ``flat`` (the embedded flat network, the default) or
``neutron`` (a real neutron-server, openkeel.network.neutron), all behind the same
``NetworkAdapter`` interface (openkeel.network.adapter).
"""

from openkeel.network.adapter import NetworkAdapter, NetworkInfo, RequestedNetwork
from openkeel.network.factory import get_network_adapter

__all__ = ["NetworkAdapter", "NetworkInfo", "RequestedNetwork", "get_network_adapter"]
