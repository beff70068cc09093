"""Hosts as the deprecated ``os-hosts`` API (up to 2.42) sees them: every non-API service's
host with its topic and zone, the resources of one compute host, and the host-level actions
its driver may do (enable/disable, maintenance window, reboot/shutdown/startup).

Called by the hosts resource. As Nova's HostAPI: a host without a host mapping is a 404
(``Host 'x' is not mapped to any cell``), a host without a compute service or node is a 404,
the actions are calls to the host's compute service whose driver answers (a 501 when it has
no such feature: Nova's libvirt and ironic drivers have none of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.api.usecases.services import ServiceAdmin
from openkeel.db.repositories import compute_nodes as nodes_repo
from openkeel.db.repositories import services as services_repo
from openkeel.domain.errors import Invalid, NotFound, NotImplementedYet
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages import RpcMessage
from openkeel.rpc.messages.compute import HostMaintenanceMode, HostPowerAction, SetHostEnabled

API_BINARIES = frozenset({"nova-osapi_compute", "nova-metadata"})
COMPUTE = "nova-compute"


@dataclass(frozen=True)
class ListedHost:
    """One row of the host list: a service's host, topic and zone."""

    host_name: str
    service: str
    zone: str


@dataclass(frozen=True)
class HostResources:
    """The rows of ``GET /os-hosts/{host}``: totals, used now, used at most, per project."""

    host: str
    node: nodes_repo.ComputeNodeRecord
    usage: list[nodes_repo.HostedUsage]


class HostNotMapped(NotFound):
    def __init__(self, host: str) -> None:
        super().__init__(f"Host '{host}' is not mapped to any cell")


class HostAdmin:
    """Hosts of the deployment (built from ``req.services``)."""

    def __init__(self, services: ApiServices) -> None:
        self._services = services
        self._api_db: sa.Engine = services.api_db

    def listing(self, zone: str | None) -> list[ListedHost]:
        """Hosts of the enabled non-API services, of ``zone`` only when given."""
        states = ServiceAdmin(self._services).listing(None, None)
        return [
            ListedHost(s.record.host, s.record.topic or "", s.zone)
            for s in states
            if not s.record.disabled
            and s.record.binary not in API_BINARIES
            and (not zone or s.zone == zone)
        ]

    def _cell(self, host: str) -> sa.Engine:
        with self._api_db.connect() as conn:
            cell_uuid = services_repo.host_cell(conn, host)
        engine = (self._services.cell_dbs or {}).get(cell_uuid or "")
        if engine is None:
            raise HostNotMapped(host)
        return engine

    def resources(self, host: str) -> HostResources:
        """The first node of ``host`` and what its instances take."""
        with self._cell(host).connect() as conn:
            nodes = nodes_repo.nodes_of_host(conn, host)
            if not nodes:
                raise NotFound(f"Compute host {host} could not be found.")
            return HostResources(host, nodes[0], nodes_repo.usage_on_host(conn, host))

    def _call(self, context: CallContext, host: str, message: RpcMessage) -> str:
        with self._cell(host).connect() as conn:
            service = services_repo.get_by_host_and_binary(conn, host, COMPUTE)
        if service is None:
            raise NotFound(f"Compute host {host} could not be found.")
        compute = self._services.compute
        if compute is None:
            raise NotImplementedYet("The requested functionality is not supported.")
        return str(compute.call(context, service.host, message))

    def set_enabled(self, context: CallContext, host: str, enabled: bool) -> str:
        """``"enabled"``/``"disabled"`` as the host's driver answered; 400 otherwise."""
        result = self._call(context, host, SetHostEnabled(enabled))
        if result not in ("enabled", "disabled"):
            raise Invalid(result)
        return result

    def set_maintenance(self, context: CallContext, host: str, mode: bool) -> str:
        """``"on_maintenance"``/``"off_maintenance"`` as the driver answered; 400 otherwise."""
        result = self._call(context, host, HostMaintenanceMode(host, mode))
        if result not in ("on_maintenance", "off_maintenance"):
            raise Invalid(result)
        return result

    def power_action(self, context: CallContext, host: str, action: str) -> str:
        """reboot, shutdown or startup, as the driver did it."""
        return self._call(context, host, HostPowerAction(action))
