"""The network API's route table (404 / 405 as Neutron answers them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openkeel.network.embedded.faults import MethodNotAllowed, NotFound
from openkeel.network_api.request import NetworkRequest, Reply
from openkeel.runtime.asgi_apps import PathTable

Handler = Callable[[NetworkRequest], Reply]


@dataclass(frozen=True)
class Endpoint:
    handler: Handler
    anonymous: bool = False


class RouteTable(PathTable[Endpoint]):
    def __init__(self) -> None:
        super().__init__(
            lambda: NotFound("The resource could not be found."),
            lambda allow: MethodNotAllowed("The method is not allowed for this resource."),
        )
