"""The scheduler's selections as the conductor reads them (Nova's Selection primitives).

select_destinations(return_objects=True, return_alternates=True) answers one list per
instance: the claimed destination first, then unclaimed alternates of the same cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.clients.placement_models import Allocations
from openkeel.domain.resource_requests import with_mappings


@dataclass(frozen=True)
class SelectedHost:
    """One host the scheduler selected (chosen or alternate): a Selection document read by the
    conductor."""

    host: str
    node: str | None
    cell_uuid: str | None
    allocation_request: str | Mapping[str, Any] | None
    primitive: Mapping[str, Any]

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> SelectedHost:
        return cls(
            host=str(data.get("service_host") or data.get("host")),
            node=data.get("nodename"),
            cell_uuid=data.get("cell_uuid"),
            allocation_request=data.get("allocation_request"),
            primitive=dict(data),
        )

    def _body(self) -> Mapping[str, Any] | None:
        body = self.allocation_request
        if isinstance(body, str):
            body = json.loads(body)
        assert body is None or isinstance(body, Mapping)
        return body

    def allocations(self) -> Allocations | None:
        """The allocation request as Placement allocations (None when there is none)."""
        body = self._body()
        if body is None:
            return None
        return {rp: dict(alloc["resources"]) for rp, alloc in body["allocations"].items()}

    def fill_provider_mapping(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """``spec`` with its ports' request groups mapped to the providers of this host's
        allocation request (Nova's ``fill_provider_mapping``); unchanged without groups."""
        groups = spec.get("requested_resources") or ()
        body = self._body()
        if not groups or body is None:
            return dict(spec)
        return {**spec, "requested_resources": with_mappings(groups, body.get("mappings") or {})}
