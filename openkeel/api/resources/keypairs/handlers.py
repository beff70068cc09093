"""os-keypairs handlers: read the microversion-dependent inputs, call the key pair use
case, render the view. Registered by ``routes.py``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.keypairs import views
from openkeel.api.usecases.keypairs import CreateKeyPair, KeyPairService
from openkeel.domain.keypairs import SSH


def _service(req: ApiRequest) -> KeyPairService:
    return KeyPairService(req.services, req.context)


def _owner_query(req: ApiRequest) -> str | None:
    """``?user_id=`` from 2.10 (Nova takes the first of repeated values)."""
    if not req.at_least("2.10"):
        return None
    values = req.query.get("user_id")
    return values[0] if values else None


def _page(req: ApiRequest) -> tuple[int | None, str | None]:
    """Page size and marker from 2.35 (last of repeated values); no paging before."""
    if not req.at_least("2.35"):
        return None, None
    max_limit: int = req.services.conf.api.max_limit
    limit = req.query_value("limit")
    return min(max_limit, int(limit) if limit is not None else max_limit), req.query_value("marker")


def list_keypairs(req: ApiRequest) -> dict[str, Any]:
    """GET /os-keypairs."""
    limit, marker = _page(req)
    keypairs = _service(req).list(_owner_query(req), limit, marker)
    return views.keypair_list(req, keypairs, req.at_least("2.2"), limit)


def show_keypair(req: ApiRequest) -> dict[str, Any]:
    """GET /os-keypairs/{id}."""
    keypair = _service(req).get(req.params["id"], _owner_query(req))
    return views.keypair_detail(keypair, req.at_least("2.2"))


def delete_keypair(req: ApiRequest) -> None:
    """DELETE /os-keypairs/{id}."""
    _service(req).delete(req.params["id"], _owner_query(req))


def create_keypair(req: ApiRequest) -> dict[str, Any]:
    """POST /os-keypairs: import ``public_key`` or generate a key pair (before 2.92)."""
    params = req.body["keypair"]
    command = CreateKeyPair(
        # Nova strips the name for the legacy v2 API; validation rejects such names from 2.1.
        name=params["name"].strip(),
        key_type=params.get("type", SSH),
        public_key=params.get("public_key"),
        owner_id=params.get("user_id") if req.at_least("2.10") else None,
    )
    created = _service(req).create(command)
    return views.keypair_created(created, req.at_least("2.2"))
