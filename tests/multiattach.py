"""A multiattach volume type on an embedded volume service (decision 0075): volumes are
multiattach only through their type's extra spec, as in Cinder 29."""

from __future__ import annotations

from openkeel.volume.embedded.service import VolumeService

NAME = "multiattach"


def multiattach_type(service: VolumeService) -> str:
    """The name of the service's multiattach type, made when missing."""
    if not any(t["name"] == NAME for t in service.types.visible(True)):
        service.types.create(True, {"name": NAME, "extra_specs": {"multiattach": "<is> True"}})
    return NAME
