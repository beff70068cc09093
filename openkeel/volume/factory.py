"""Pick the volume adapter from ``[openkeel_volume] backend`` (called by the compute API's use
cases and the compute hosts).

``embedded``: the all-in-one's volume service on the API database; ``cinder``: a real Cinder
found with ``[cinder]``. Made once per (configuration, API database) and kept on the engine, as
the network adapter is.
"""

from __future__ import annotations

import threading
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.volume.adapter import VolumeAdapter

_ATTRIBUTE = "_openkeel_volume_adapter"
_LOCK = threading.Lock()


def get_volume_adapter(conf: cfg.ConfigOpts, api_db: sa.Engine) -> VolumeAdapter:
    """``embedded`` -> the embedded volume service, its data under ``state_path``;
    ``cinder`` -> the Cinder ``[cinder]`` locates."""
    with _LOCK:
        made = getattr(api_db, _ATTRIBUTE, None)
        if made is not None and made[0] is conf:
            adapter: VolumeAdapter = made[1]
            return adapter
        if conf.openkeel_volume.backend == "cinder":
            from openkeel.volume.cinder import CinderVolumes

            adapter = CinderVolumes(conf)
        else:
            from openkeel.volume.embedded.adapter import EmbeddedVolumes

            adapter = EmbeddedVolumes(api_db, conf.state_path)
        setattr(api_db, _ATTRIBUTE, (conf, adapter))
    return adapter


def provide_images(conf: cfg.ConfigOpts, api_db: sa.Engine, images: Any) -> None:
    """Let the embedded volume service make volumes from images (``images``: its
    ``ImageSource``); called by the composition root that knows the image service."""
    from openkeel.volume.embedded.adapter import EmbeddedVolumes

    adapter = get_volume_adapter(conf, api_db)
    if isinstance(adapter, EmbeddedVolumes):
        adapter.use_images(images)


def send_volume_events(conf: cfg.ConfigOpts, api_db: sa.Engine, nova: Any) -> None:
    """Let the embedded volume service report to the compute API as Cinder does
    (``volume-reimaged``; ``nova``: its ``NovaEvents``); called by the composition root that
    serves the compute API in the same process."""
    from openkeel.volume.embedded.adapter import EmbeddedVolumes

    adapter = get_volume_adapter(conf, api_db)
    if isinstance(adapter, EmbeddedVolumes):
        adapter.send_events_with(nova)
