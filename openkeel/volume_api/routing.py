"""The volume API's route table (404 / 405 as Cinder answers them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openkeel.runtime.asgi_apps import PathTable
from openkeel.volume.embedded.faults import MethodNotAllowed, NotFound
from openkeel.volume_api.request import Reply, VolumeRequest

Handler = Callable[[VolumeRequest], Reply]


@dataclass(frozen=True)
class Endpoint:
    handler: Handler
    anonymous: bool = False


class RouteTable(PathTable[Endpoint]):
    def __init__(self) -> None:
        super().__init__(
            lambda: NotFound("The resource could not be found."),
            lambda allow: MethodNotAllowed("The server could not comply with the request since "
                                           "it is either malformed or otherwise incorrect."),
        )  # fmt: skip
