"""The identity API's route table: path templates -> endpoints by method (404 / 405 as
Keystone answers them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openkeel.identity_api.faults import MethodNotAllowed, NotFound
from openkeel.identity_api.request import IdentityRequest, Reply
from openkeel.runtime.asgi_apps import PathTable

Handler = Callable[[IdentityRequest], Reply]


@dataclass(frozen=True)
class Endpoint:
    handler: Handler
    # Served without a token (version discovery, POST /v3/auth/tokens).
    anonymous: bool = False


class RouteTable(PathTable[Endpoint]):
    def __init__(self) -> None:
        super().__init__(
            lambda: NotFound("The resource could not be found."),
            lambda allow: MethodNotAllowed(
                "The method is not allowed for the requested URL.", (("Allow", allow),)
            ),
        )
