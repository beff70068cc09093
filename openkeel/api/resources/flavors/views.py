"""Response bodies of the flavor APIs per microversion (Nova's flavor view builder contract).

Called by ``handlers.py``; pure functions of the request (version, links) and the entities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.domain.flavors import Flavor


class _Style:
    """What every flavor body of one response shares: the version-dependent field set and
    the link prefixes (computed once per response, not per flavor)."""

    __slots__ = ("bookmark_prefix", "description", "legacy", "modern_swap", "self_prefix")

    def __init__(self, req: ApiRequest) -> None:
        self.self_prefix = req.self_link("flavors", "")
        self.bookmark_prefix = req.bookmark_link("flavors", "")
        self.description = req.at_least("2.55")
        # Before 2.75 Nova renders a zero swap (and a missing rxtx_factor) as "".
        self.modern_swap = req.at_least("2.75")
        # 2.102 drops the disabled flag and rxtx_factor.
        self.legacy = not req.at_least("2.102")

    def links(self, flavorid: str) -> list[dict[str, str]]:
        return [
            {"rel": "self", "href": self.self_prefix + flavorid},
            {"rel": "bookmark", "href": self.bookmark_prefix + flavorid},
        ]

    def brief(self, flavor: Flavor) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": flavor.flavorid,
            "name": flavor.name,
            "links": self.links(flavor.flavorid),
        }
        if self.description:
            body["description"] = flavor.description
        return body

    def detail(self, flavor: Flavor, with_specs: bool) -> dict[str, Any]:
        swap = flavor.swap
        body: dict[str, Any] = {
            "id": flavor.flavorid,
            "name": flavor.name,
            "ram": flavor.memory_mb,
            "disk": flavor.root_gb,
            "swap": swap if self.modern_swap else (swap or ""),
            "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral_gb,
        }
        if self.legacy:
            body["OS-FLV-DISABLED:disabled"] = flavor.disabled
        body["vcpus"] = flavor.vcpus
        body["os-flavor-access:is_public"] = flavor.is_public
        if self.legacy:
            body["rxtx_factor"] = flavor.rxtx_factor or ""
        body["links"] = self.links(flavor.flavorid)
        if self.description:
            body["description"] = flavor.description
        if with_specs:
            body["extra_specs"] = dict(flavor.extra_specs)
        return body


def brief(req: ApiRequest, flavor: Flavor) -> dict[str, Any]:
    """One entry of ``GET /flavors``."""
    return _Style(req).brief(flavor)


def detail(req: ApiRequest, flavor: Flavor, with_specs: bool) -> dict[str, Any]:
    """The full flavor (show, create, update and the entries of ``/flavors/detail``)."""
    return _Style(req).detail(flavor, with_specs)


def one(req: ApiRequest, flavor: Flavor, with_specs: bool) -> dict[str, Any]:
    """``{"flavor": {...}}``."""
    return {"flavor": detail(req, flavor, with_specs)}


def collection(
    req: ApiRequest, flavors: Sequence[Flavor], max_limit: int, with_specs: bool | None
) -> dict[str, Any]:
    """``GET /flavors`` (``with_specs`` None) or ``GET /flavors/detail``, with the next link
    when the page is full."""
    style = _Style(req)
    if with_specs is None:
        items = [style.brief(f) for f in flavors]
        path = "flavors"
    else:
        items = [style.detail(f, with_specs) for f in flavors]
        path = "flavors/detail"
    body: dict[str, Any] = {"flavors": items}
    limit = req.query_value("limit")
    page_size = min(int(limit), max_limit) if limit is not None else max_limit
    if page_size and page_size == len(flavors):
        body["flavors_links"] = [
            {"rel": "next", "href": _next_href(req, path, flavors[-1].flavorid)}
        ]
    return body


def _next_href(req: ApiRequest, path: str, marker: str) -> str:
    # Nova sorts the (name, value) pairs, keeps the last value per name, then sets the
    # marker (in place when the request had one).
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = marker
    return f"{req.self_link(path)}?{urlencode(params)}"


def access_list(flavorid: str, projects: Sequence[str]) -> dict[str, Any]:
    """The body of the flavor access list and of both access actions."""
    return {"flavor_access": [{"flavor_id": flavorid, "tenant_id": p} for p in projects]}
