"""Versioned payloads of everything but instances: flavor, keypair, aggregate, server group,
service status, exception and audit period (versions as Nova 34.0.0's notification objects).
Pure builders over domain values; called through openkeel.notifications.emitter."""

from __future__ import annotations

import datetime
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from openkeel.domain.aggregates import Aggregate
from openkeel.domain.flavors import Flavor
from openkeel.domain.instances import FlavorSnapshot
from openkeel.domain.keypairs import KeyPair
from openkeel.domain.server_groups import ServerGroup
from openkeel.notifications.envelope import iso, ovo


def flavor_payload(
    flavor: Flavor | FlavorSnapshot,
    *,
    projects: Sequence[str] | None = None,
    extra_specs: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """FlavorPayload 1.4; ``extra_specs``/``projects`` None where Nova leaves them unloaded."""
    specs = dict(flavor.extra_specs) if extra_specs is None else dict(extra_specs)
    return ovo(
        "FlavorPayload",
        "1.4",
        {
            "flavorid": flavor.flavorid,
            "name": flavor.name,
            "root_gb": flavor.root_gb,
            "vcpus": flavor.vcpus,
            "ephemeral_gb": flavor.ephemeral_gb,
            "memory_mb": flavor.memory_mb,
            "disabled": getattr(flavor, "disabled", False),
            "rxtx_factor": float(flavor.rxtx_factor if flavor.rxtx_factor is not None else 1.0),
            "extra_specs": specs,
            "projects": None if projects is None else list(projects),
            "swap": flavor.swap,
            "is_public": flavor.is_public,
            "vcpu_weight": flavor.vcpu_weight or 0,
            "description": flavor.description,
        },
    )


def keypair_payload(keypair: KeyPair) -> dict[str, Any]:
    """KeypairPayload 1.0."""
    return ovo(
        "KeypairPayload",
        "1.0",
        {
            "user_id": keypair.user_id,
            "name": keypair.name,
            "fingerprint": keypair.fingerprint,
            "public_key": keypair.public_key,
            "type": keypair.type,
        },
    )


def aggregate_payload(
    aggregate: Aggregate | None,
    *,
    name: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """AggregatePayload 1.1; without ``aggregate`` (create.start): the requested name and
    metadata, no id, no hosts, as Nova's not yet created object."""
    if aggregate is None:
        data: dict[str, Any] = {
            "uuid": None,
            "name": name,
            "metadata": dict(metadata or {}),
            "hosts": None,
            "id": None,
        }
    else:
        data = {
            "uuid": aggregate.uuid,
            "name": aggregate.name,
            "metadata": dict(aggregate.metadata),
            "hosts": list(aggregate.hosts),
            "id": aggregate.id,
        }
    return ovo("AggregatePayload", "1.1", data)


def server_group_payload(
    group: ServerGroup, *, hosts: Sequence[str] | None = None
) -> dict[str, Any]:
    """ServerGroupPayload 1.1 (``policies`` the 2.64-less list form of ``policy``)."""
    return ovo(
        "ServerGroupPayload",
        "1.1",
        {
            "uuid": group.uuid,
            "name": group.name,
            "project_id": group.project_id,
            "user_id": group.user_id,
            "policies": [group.policy] if group.policy else [],
            "policy": group.policy,
            "rules": {k: str(v) for k, v in group.rules.items()},
            "members": list(group.members),
            "hosts": None if hosts is None else list(hosts),
        },
    )


@dataclass(frozen=True)
class ServiceStatus:
    """What a ServiceStatusPayload shows of one ``services`` row."""

    uuid: str | None
    host: str
    binary: str
    topic: str | None
    report_count: int
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    version: int
    last_seen_up: datetime.datetime | None
    availability_zone: str | None = None


class ServiceRow(Protocol):
    """What a ``services`` row offers (openkeel.db's ServiceRecord; no import of the db)."""

    @property
    def uuid(self) -> str | None: ...

    @property
    def host(self) -> str: ...

    @property
    def binary(self) -> str: ...

    @property
    def topic(self) -> str | None: ...

    @property
    def report_count(self) -> int: ...

    @property
    def disabled(self) -> bool: ...

    @property
    def disabled_reason(self) -> str | None: ...

    @property
    def forced_down(self) -> bool: ...

    @property
    def version(self) -> int: ...

    @property
    def last_seen_up(self) -> datetime.datetime | None: ...


def service_status(row: ServiceRow) -> ServiceStatus:
    """What a service.* notification shows of a ``services`` row."""
    return ServiceStatus(
        uuid=row.uuid,
        host=row.host,
        binary=row.binary,
        topic=row.topic,
        report_count=row.report_count,
        disabled=row.disabled,
        disabled_reason=row.disabled_reason,
        forced_down=row.forced_down,
        version=row.version,
        last_seen_up=row.last_seen_up,
    )


# Saves of these fields send service.update (Nova's Service.save; heartbeats do not).
STATUS_FIELDS = frozenset({"disabled", "disabled_reason", "forced_down"})


def service_payload(service: ServiceStatus) -> dict[str, Any]:
    """ServiceStatusPayload 1.1."""
    return ovo(
        "ServiceStatusPayload",
        "1.1",
        {
            "host": service.host,
            "disabled": service.disabled,
            "binary": service.binary,
            "topic": service.topic,
            "disabled_reason": service.disabled_reason,
            "forced_down": service.forced_down,
            "version": service.version,
            "availability_zone": service.availability_zone,
            "uuid": service.uuid,
            "last_seen_up": iso(service.last_seen_up),
            "report_count": service.report_count,
        },
    )


def exception_payload(exc: BaseException) -> dict[str, Any]:
    """ExceptionPayload 1.1: the exception's class and message and where it was raised."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    function_name = tb.tb_frame.f_code.co_name if tb is not None else ""
    module_name = (
        str(tb.tb_frame.f_globals.get("__name__", "")) if tb is not None else type(exc).__module__
    )
    return ovo(
        "ExceptionPayload",
        "1.1",
        {
            "function_name": function_name,
            "module_name": module_name,
            "exception": type(exc).__name__,
            "exception_message": str(exc),
            "traceback": "".join(traceback.format_exception(exc)),
        },
    )


def audit_period_payload(beginning: datetime.datetime, ending: datetime.datetime) -> dict[str, Any]:
    """AuditPeriodPayload 1.0."""
    return ovo(
        "AuditPeriodPayload",
        "1.0",
        {"audit_period_beginning": iso(beginning), "audit_period_ending": iso(ending)},
    )
