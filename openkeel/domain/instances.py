"""Instances: the server entity every role shares, its flavor snapshot, faults and errors.

Built by the instance repository (``openkeel.db.repositories.instances``) from the cell DB, by
the servers API from a request (stored serialized in ``build_requests.instance``), and carried
over RPC as ``to_primitive()`` dicts. ``InstanceUpdate`` is the typed set of changes the
repository applies with compare-and-swap on the expected task/vm state. Messages are Nova's.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from openkeel.domain.errors import Conflict, Invalid, NotFound


class InstanceNotFound(NotFound):
    def __init__(self, instance_id: str) -> None:
        super().__init__(f"Instance {instance_id} could not be found.")
        self.instance_id = instance_id


class InstanceMappingNotFound(InstanceNotFound):
    """No instance mapping: the API answers it like a missing instance (404)."""

    def __init__(self, uuid: str) -> None:
        NotFound.__init__(self, f"Instance {uuid} has no mapping to a cell.")
        self.instance_id = uuid


class BuildRequestNotFound(NotFound):
    def __init__(self, uuid: str) -> None:
        super().__init__(f"BuildRequest not found for instance {uuid}")
        self.uuid = uuid


class RequestSpecNotFound(NotFound):
    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"RequestSpec not found for instance {instance_uuid}")
        self.instance_uuid = instance_uuid


class HostMappingNotFound(Invalid):
    def __init__(self, name: str) -> None:
        super().__init__(f"Host '{name}' is not mapped to any cell")
        self.name = name


class InstanceTagNotFound(NotFound):
    def __init__(self, instance_id: str, tag: str) -> None:
        super().__init__(f"Instance {instance_id} has no tag '{tag}'")


class InstanceActionNotFound(NotFound):
    def __init__(self, request_id: str, instance_uuid: str) -> None:
        super().__init__(
            f"Action for request_id {request_id} on instance {instance_uuid} not found"
        )


class MarkerNotFound(Invalid):
    """``GET /servers?marker=`` names no server (Nova answers 400 with this text)."""

    def __init__(self, marker: str) -> None:
        super().__init__(f"marker [{marker}] not found")
        self.marker = marker


class InvalidSortKey(Invalid):
    def __init__(self) -> None:
        super().__init__("Sort key supplied was not valid.")


class InvalidSortDirection(Invalid):
    """Nova's ``InvalidInput`` from its sort parameter check: an unknown direction, or more
    directions than keys."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Invalid input received: {reason}")


class InstanceUpdateConflict(Conflict):
    """The row's state was not what the caller expected (compare-and-swap lost)."""

    def __init__(self, instance_uuid: str, expected: dict[str, Any], actual: dict[str, Any]):
        super().__init__(
            f"Conflict updating instance {instance_uuid}. Expected: {expected}. Actual: {actual}"
        )
        self.instance_uuid = instance_uuid
        self.expected = expected
        self.actual = actual


class UnexpectedTaskStateError(InstanceUpdateConflict):
    """The task state differed from the expected one."""


class UnexpectedDeletingTaskStateError(UnexpectedTaskStateError):
    """The task state was ``deleting``: someone is deleting the instance."""


@dataclass(frozen=True)
class FlavorSnapshot:
    """The flavor as it was when the instance got it (``instance_extra.flavor``)."""

    flavorid: str
    name: str
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    rxtx_factor: float = 1.0
    vcpu_weight: int | None = None
    is_public: bool = True
    extra_specs: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None
    id: int | None = None  # flavors.id in the API DB (``instances.instance_type_id``)

    def to_primitive(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["extra_specs"] = dict(self.extra_specs)
        return data

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> FlavorSnapshot:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["extra_specs"] = dict(values.get("extra_specs") or {})
        return cls(**values)


@dataclass(frozen=True)
class InstanceFault:
    """An error recorded against an instance (``instance_faults``); the API shows the latest."""

    code: int
    message: str
    details: str | None = None
    created_at: datetime | None = None
    host: str | None = None

    def to_primitive(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "details": self.details,
            "created_at": _dt_out(self.created_at),
            "host": self.host,
        }

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> InstanceFault:
        return cls(
            code=int(data["code"]),
            message=data.get("message") or "",
            details=data.get("details"),
            created_at=_dt_in(data.get("created_at")),
            host=data.get("host"),
        )


@dataclass(frozen=True)
class Instance:
    """One server as stored in a cell DB (or, before scheduling, in its build request)."""

    uuid: str
    project_id: str
    user_id: str
    flavor: FlavorSnapshot
    display_name: str | None = None
    display_description: str | None = None
    hostname: str | None = None
    image_ref: str | None = None
    vm_state: str | None = None
    task_state: str | None = None
    power_state: int | None = 0
    host: str | None = None
    node: str | None = None
    compute_id: int | None = None
    launched_on: str | None = None
    availability_zone: str | None = None
    key_name: str | None = None
    key_data: str | None = None
    user_data: str | None = None
    config_drive: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    system_metadata: Mapping[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    locked: bool = False
    locked_by: str | None = None
    reservation_id: str | None = None
    launch_index: int | None = 0
    access_ip_v4: str | None = None
    access_ip_v6: str | None = None
    progress: int | None = 0
    auto_disk_config: bool = False
    root_device_name: str | None = None
    kernel_id: str | None = None
    ramdisk_id: str | None = None
    os_type: str | None = None
    architecture: str | None = None
    vm_mode: str | None = None
    default_ephemeral_device: str | None = None
    default_swap_device: str | None = None
    shutdown_terminate: bool = False
    disable_terminate: bool = False
    hidden: bool = False
    trusted_certs: tuple[str, ...] | None = None
    network_info: tuple[Mapping[str, Any], ...] = ()
    security_groups: tuple[str, ...] = ()
    old_flavor: FlavorSnapshot | None = None
    new_flavor: FlavorSnapshot | None = None
    fault: InstanceFault | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    launched_at: datetime | None = None
    terminated_at: datetime | None = None
    deleted_at: datetime | None = None
    deleted: bool = False
    id: int | None = None  # cell DB row id; None until created

    def to_primitive(self) -> dict[str, Any]:
        """JSON-safe dict (RPC payloads, ``build_requests.instance``)."""
        data: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            data[f.name] = _value_out(getattr(self, f.name))
        return data

    @classmethod
    def from_primitive(cls, data: Mapping[str, Any]) -> Instance:
        """Inverse of ``to_primitive``; unknown keys are ignored (newer senders)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                values[f.name] = _field_in(f.name, data[f.name])
        return cls(**values)

    def apply(self, update: InstanceUpdate) -> Instance:
        """This instance with ``update``'s changes."""
        return dataclasses.replace(self, **update.changes())


class _Unset(enum.Enum):
    UNSET = "unset"


UNSET = _Unset.UNSET
"""Marks an ``InstanceUpdate`` field that does not change."""


@dataclass(frozen=True)
class InstanceUpdate:
    """The columns one ``update`` changes; fields left ``UNSET`` stay as they are.

    ``metadata`` and ``system_metadata`` replace the whole mapping; ``network_info`` replaces
    the info cache; flavors rewrite ``instance_extra.flavor``.
    """

    display_name: str | _Unset | None = UNSET
    display_description: str | _Unset | None = UNSET
    hostname: str | _Unset | None = UNSET
    image_ref: str | _Unset | None = UNSET
    vm_state: str | _Unset | None = UNSET
    task_state: str | _Unset | None = UNSET
    power_state: int | _Unset | None = UNSET
    host: str | _Unset | None = UNSET
    node: str | _Unset | None = UNSET
    compute_id: int | _Unset | None = UNSET
    launched_on: str | _Unset | None = UNSET
    availability_zone: str | _Unset | None = UNSET
    key_name: str | _Unset | None = UNSET
    key_data: str | _Unset | None = UNSET
    user_data: str | _Unset | None = UNSET
    config_drive: str | _Unset | None = UNSET
    locked: bool | _Unset = UNSET
    locked_by: str | _Unset | None = UNSET
    launch_index: int | _Unset | None = UNSET
    access_ip_v4: str | _Unset | None = UNSET
    access_ip_v6: str | _Unset | None = UNSET
    progress: int | _Unset | None = UNSET
    auto_disk_config: bool | _Unset = UNSET
    root_device_name: str | _Unset | None = UNSET
    hidden: bool | _Unset = UNSET
    launched_at: datetime | _Unset | None = UNSET
    terminated_at: datetime | _Unset | None = UNSET
    metadata: Mapping[str, str] | _Unset = UNSET
    system_metadata: Mapping[str, str] | _Unset = UNSET
    network_info: Sequence[Mapping[str, Any]] | _Unset = UNSET
    flavor: FlavorSnapshot | _Unset = UNSET
    old_flavor: FlavorSnapshot | _Unset | None = UNSET
    new_flavor: FlavorSnapshot | _Unset | None = UNSET
    trusted_certs: tuple[str, ...] | _Unset | None = UNSET

    def changes(self) -> dict[str, Any]:
        """Field name → new value, for the fields that are set."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not UNSET:
                out[f.name] = tuple(value) if f.name == "network_info" else value
        return out


EXTRA_FIELDS = frozenset({"flavor", "old_flavor", "new_flavor", "trusted_certs"})
"""``InstanceUpdate`` fields stored in ``instance_extra`` rather than ``instances``."""
RELATED_FIELDS = frozenset({"metadata", "system_metadata", "network_info"})
"""``InstanceUpdate`` fields stored in their own tables."""

_DATETIMES = frozenset({"created_at", "updated_at", "launched_at", "terminated_at", "deleted_at"})
_TUPLES = frozenset({"tags", "security_groups"})


def _dt_out(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dt_in(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed.replace(tzinfo=None) if parsed.tzinfo is not None else parsed


def _value_out(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, FlavorSnapshot | InstanceFault):
        return value.to_primitive()
    if isinstance(value, Mapping):
        return {k: _value_out(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_value_out(v) for v in value]
    return value


def _field_in(name: str, value: Any) -> Any:
    if value is None:
        return {} if name in ("metadata", "system_metadata") else None
    if name in _DATETIMES:
        return _dt_in(value)
    if name in ("flavor", "old_flavor", "new_flavor"):
        return FlavorSnapshot.from_primitive(value)
    if name == "fault":
        return InstanceFault.from_primitive(value)
    if name in _TUPLES or name == "trusted_certs":
        return tuple(value)
    if name == "network_info":
        return tuple(dict(vif) for vif in value)
    if name in ("metadata", "system_metadata"):
        return dict(value)
    return value
