"""Pick the volume adapter (called by the compute API's use cases and the compute hosts).

Today the embedded volume service on the API database; made once per (configuration, API
database) and kept on the engine, as the network adapter is.
"""

from __future__ import annotations

import threading

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.volume.adapter import VolumeAdapter

_ATTRIBUTE = "_openkeel_volume_adapter"
_LOCK = threading.Lock()


def get_volume_adapter(conf: cfg.ConfigOpts, api_db: sa.Engine) -> VolumeAdapter:
    """The embedded volume service's adapter, with its data under ``state_path``."""
    from openkeel.volume.embedded.adapter import EmbeddedVolumes

    with _LOCK:
        made = getattr(api_db, _ATTRIBUTE, None)
        if made is not None and made[0] is conf:
            adapter: VolumeAdapter = made[1]
            return adapter
        adapter = EmbeddedVolumes(api_db, conf.state_path)
        setattr(api_db, _ATTRIBUTE, (conf, adapter))
    return adapter
