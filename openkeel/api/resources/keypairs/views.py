"""Response bodies of os-keypairs per microversion (``type`` from 2.2, paging links from
2.35), with Nova's field sets: index < create < show."""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import urlencode

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.keypairs import CreatedKeyPair
from openkeel.domain.keypairs import KeyPair

COLLECTION = "os-keypairs"
# oslo.serialization's format for datetimes in Nova's JSON bodies (no zone, microseconds).
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def _time(value: datetime.datetime | None) -> str | None:
    return value.strftime(TIME_FORMAT) if value is not None else None


def _index_fields(keypair: KeyPair, with_type: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": keypair.name,
        "public_key": keypair.public_key,
        "fingerprint": keypair.fingerprint,
    }
    if with_type:
        body["type"] = keypair.type
    return body


def keypair_list(
    req: ApiRequest, keypairs: list[KeyPair], with_type: bool, page_size: int | None
) -> dict[str, Any]:
    """``{"keypairs": [{"keypair": {...}}, ...]}`` and, when a full page came back with
    paging in force (``page_size`` not None), ``keypairs_links`` with the next page."""
    body: dict[str, Any] = {
        "keypairs": [{"keypair": _index_fields(kp, with_type)} for kp in keypairs]
    }
    if page_size and len(keypairs) == page_size:
        body["keypairs_links"] = [{"rel": "next", "href": _next_link(req, keypairs[-1].name)}]
    return body


def _next_link(req: ApiRequest, marker: str) -> str:
    # Nova sorts the request's (name, value) pairs, keeps the last value per name and
    # replaces the marker.
    params: dict[str, str] = {}
    for name, value in sorted((k, v) for k, vals in req.query.items() for v in vals):
        params[name] = value
    params["marker"] = marker
    return f"{req.self_link(COLLECTION)}?{urlencode(params)}"


def keypair_created(created: CreatedKeyPair, with_type: bool) -> dict[str, Any]:
    """The create body: the private key only when generated here."""
    keypair = created.keypair
    body: dict[str, Any] = {}
    if created.private_key is not None:
        body["private_key"] = created.private_key
    body.update(_index_fields(keypair, with_type))
    body["user_id"] = keypair.user_id
    return {"keypair": body}


def keypair_detail(keypair: KeyPair, with_type: bool) -> dict[str, Any]:
    """The show body, with the soft-delete fields Nova exposes but never fills."""
    body = _index_fields(keypair, with_type)
    body.update(
        {
            "user_id": keypair.user_id,
            "created_at": _time(keypair.created_at),
            "deleted": False,
            "deleted_at": None,
            "id": keypair.id,
            "updated_at": _time(keypair.updated_at),
        }
    )
    return {"keypair": body}
