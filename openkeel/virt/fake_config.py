"""Settings of the simulated driver (openkeel.virt.fake): host size, delays, failures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class InjectedFailure:
    """Make ``operation`` fail (for one instance, or any when None) the next ``times`` calls
    (always when None); transient failures raise TransientDriverError."""

    operation: str
    instance_uuid: str | None = None
    transient: bool = False
    times: int | None = None


@dataclass(frozen=True)
class FakeDriverConfig:
    """Host size (Nova's fake driver defaults), delays per operation, failures to inject."""

    nodes: tuple[str, ...] = ("fake-mini",)
    vcpus: int = 1000
    memory_mb: int = 800000
    local_gb: int = 600000
    hypervisor_type: str = "fake"
    hypervisor_version: int = 1000
    traits: frozenset[str] = frozenset({"COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_VOLUME_EXTEND"})
    delays: Mapping[str, float] = field(default_factory=dict)
    failures: tuple[InjectedFailure, ...] = ()
    fail_spawn_for: frozenset[str] = frozenset()
    unsupported: frozenset[str] = frozenset()
    live_migration_steps: int = 3
    # Where guests' files go (``<instances_path>/<uuid>/disk.config``: the config drive's
    # ISO image); None keeps nothing on disk.
    instances_path: str | None = None
    # ``iso9660`` or ``vfat`` (Nova's deprecated ``[DEFAULT] config_drive_format``).
    config_drive_format: str = "iso9660"
