"""``POST /servers/{id}/action`` with ``shelve``, ``shelveOffload`` or ``unshelve``: 202, no
body (2.77 unshelve availability_zone, 2.91 host and a null zone)."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.servers.shelve import ServerShelver
from openkeel.domain.instances import UNSET


def shelve(req: ApiRequest) -> None:
    """shelve."""
    shelver = ServerShelver(req.services, req.context)
    found = shelver.find(req.params["id"])
    shelver.authorize_shelve("shelve", found)
    shelver.shelve(found)


def shelve_offload(req: ApiRequest) -> None:
    """shelveOffload."""
    shelver = ServerShelver(req.services, req.context)
    found = shelver.find(req.params["id"])
    shelver.authorize_shelve("shelve_offload", found)
    shelver.shelve_offload(found)


def unshelve(req: ApiRequest) -> None:
    """unshelve."""
    shelver = ServerShelver(req.services, req.context)
    found = shelver.find(req.params["id"])
    shelver.authorize_shelve("unshelve", found, with_user=False)
    body: Any = req.body.get("unshelve")
    new_az: Any = UNSET
    host = None
    if isinstance(body, dict) and body:
        if req.at_least("2.77") and "availability_zone" in body:
            new_az = body["availability_zone"]
        if req.at_least("2.91"):
            host = body.get("host")
    shelver.unshelve(found, new_az, host)
