"""The vocabulary of the extra-spec rules (flavor extra specs and image properties -> KubeVirt).

A :class:`Draft` each rule of ``cpu_rules`` and ``device_rules`` reads its keys from (the flavor
wins over the image) and writes a partial domain tree into, the :class:`Outcome` it records
(applied, emulated or ignored), and the resulting :class:`DomainSettings`. ``resolution.resolve`` runs the rules; this module imports none of them,
so the rule modules can import it without a cycle. A combination KubeVirt cannot express raises
:class:`UnsupportedFeature` (an ``Invalid``: the API answers 400).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from openkeel.domain.errors import Invalid
from openkeel.virt.kubevirt.manifests.settings import JsonObj, KubevirtSettings
from openkeel.virt.model import FlavorSpec, ImageSpec

FLAVOR = "flavor"
IMAGE = "image"


class Treatment(enum.StrEnum):
    """What became of one extra spec or image property."""

    APPLIED = "applied"  # a KubeVirt field with the same meaning
    EMULATED = "emulated"  # a KubeVirt field with a close but documented different meaning
    IGNORED = "ignored"  # no effect on the VM (scheduling-only, or no KubeVirt equivalent)


@dataclass(frozen=True)
class Outcome:
    key: str
    value: str
    source: str  # "flavor" | "image"
    treatment: Treatment
    note: str = ""


class UnsupportedFeature(Invalid):
    """An extra spec / image property (combination) KubeVirt cannot provide: Nova's 400."""

    def __init__(self, key: str, value: str, source: str, reason: str) -> None:
        what = "Flavor extra spec" if source == FLAVOR else "Image property"
        super().__init__(f"{what} {key}={value} is not supported by the KubeVirt driver: {reason}")
        self.key = key
        self.value = value
        self.source = source
        self.reason = reason


@dataclass(frozen=True)
class DomainSettings:
    """The result: fields to merge into the VMI spec plus device defaults and the report."""

    domain: JsonObj  # partial ``spec.template.spec.domain``
    template: JsonObj  # partial ``spec.template.spec`` (architecture...)
    disk_bus: str
    cdrom_bus: str
    vif_model: str | None
    config_drive_forced: bool
    outcomes: tuple[Outcome, ...]

    def outcome(self, key: str) -> Outcome | None:
        """The outcome recorded for ``key`` (either source), if any."""
        return next((o for o in self.outcomes if o.key == key), None)


@dataclass(frozen=True)
class Picked:
    """A value read from the flavor or the image."""

    key: str
    value: str
    source: str


class Draft:
    """Mutable state shared by the rules of one :func:`resolve` call (never escapes it)."""

    def __init__(self, flavor: FlavorSpec, image: ImageSpec | None, settings: KubevirtSettings):
        self.flavor = flavor
        self.settings = settings
        self.specs: Mapping[str, str] = flavor.extra_specs
        self.props: Mapping[str, str] = _with_current_names(
            image.properties if image is not None else {}
        )
        self.domain: JsonObj = {}
        self.template: JsonObj = {}
        self.outcomes: list[Outcome] = []
        self.disk_bus = "virtio"
        self.cdrom_bus = "sata"
        self.vif_model: str | None = None
        self.config_drive_forced = False
        self.dedicated = False
        self.hugepages = False
        self.uefi = False

    def pick(self, spec_key: str | None, prop_key: str | None) -> Picked | None:
        """The flavor's value of ``spec_key`` if set, else the image's ``prop_key``."""
        if spec_key is not None and spec_key in self.specs:
            return Picked(spec_key, self.specs[spec_key], FLAVOR)
        if prop_key is not None and prop_key in self.props:
            return Picked(prop_key, self.props[prop_key], IMAGE)
        return None

    def put(self, path: str, value: object, root: str = "domain") -> None:
        """Set a dotted path (``cpu.sockets``) in the partial domain (or template) tree."""
        node = self.domain if root == "domain" else self.template
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value

    def append(self, path: str, item: JsonObj) -> None:
        """Append to a list at a dotted path of the partial domain tree."""
        *parents, leaf = path.split(".")
        node = self.domain
        for part in parents:
            node = node.setdefault(part, {})
        node.setdefault(leaf, []).append(item)

    def record(self, picked: Picked, treatment: Treatment, note: str = "") -> None:
        self.outcomes.append(Outcome(picked.key, picked.value, picked.source, treatment, note))

    def record_both(
        self, spec_key: str, prop_key: str, treatment: Treatment, note: str = ""
    ) -> None:
        """Record every key of the pair that is set (the image one is overridden if both)."""
        for key, source, values in ((spec_key, FLAVOR, self.specs), (prop_key, IMAGE, self.props)):
            if key in values:
                self.outcomes.append(Outcome(key, values[key], source, treatment, note))

    def refuse(self, picked: Picked, reason: str) -> UnsupportedFeature:
        return UnsupportedFeature(picked.key, picked.value, picked.source, reason)


Rule = Callable[[Draft], None]


def truthy(value: str) -> bool:
    """oslo's bool_from_string for the spellings Nova accepts in extra specs."""
    return value.strip().lower() in {"1", "t", "true", "on", "y", "yes"}


# Glance property names Nova still accepts for their current ImageMetaProps names.
_LEGACY_NAMES = {
    "architecture": "hw_architecture",
    "vm_mode": "hw_vm_mode",
    "auto_disk_config": "hw_auto_disk_config",
    "hypervisor_type": "img_hv_type",
    "hypervisor_version_requires": "img_hv_requested_version",
}


def _with_current_names(props: Mapping[str, str]) -> dict[str, str]:
    renamed = {_LEGACY_NAMES.get(k, k): v for k, v in props.items() if k not in _LEGACY_NAMES}
    for old, new in _LEGACY_NAMES.items():
        if old in props and new not in props:
            renamed[new] = props[old]
    return renamed
