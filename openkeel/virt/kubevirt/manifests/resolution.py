"""Flavor extra specs and image properties -> KubeVirt domain settings, with a typed report.

Called by ``vm.build_server`` (and by the API tier, through the driver, to reject a flavor/image
combination with a 400 before anything is scheduled). :func:`resolve` runs every rule of
``cpu_rules`` and ``device_rules`` over one ``extra_specs.Draft``; keys no rule consumed are
classified from the support table (``support``): refused ones raise ``UnsupportedFeature``, the
others are recorded as ignored.
"""

from __future__ import annotations

from openkeel.virt.kubevirt.manifests import cpu_rules, device_rules
from openkeel.virt.kubevirt.manifests.extra_specs import (
    FLAVOR,
    IMAGE,
    DomainSettings,
    Draft,
    Picked,
    Treatment,
)
from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings
from openkeel.virt.kubevirt.manifests.support import REFUSED, SupportRow, lookup
from openkeel.virt.model import FlavorSpec, ImageSpec


def resolve(
    flavor: FlavorSpec, image: ImageSpec | None, settings: KubevirtSettings
) -> DomainSettings:
    """Apply every rule; raise ``UnsupportedFeature``/``Invalid`` for what cannot be honoured."""
    draft = Draft(flavor, image, settings)
    for rule in (*cpu_rules.RULES, *device_rules.RULES):
        rule(draft)
    seen = {(o.key, o.source) for o in draft.outcomes}
    for source, values in ((FLAVOR, draft.specs), (IMAGE, draft.props)):
        for key in sorted(values):
            if (key, source) not in seen:
                _classify_leftover(draft, lookup(key, source), Picked(key, values[key], source))
    return DomainSettings(
        domain=draft.domain,
        template=draft.template,
        disk_bus=draft.disk_bus,
        cdrom_bus=draft.cdrom_bus,
        vif_model=draft.vif_model,
        config_drive_forced=draft.config_drive_forced,
        outcomes=tuple(draft.outcomes),
    )


def _classify_leftover(draft: Draft, row: SupportRow | None, picked: Picked) -> None:
    """A key no rule consumed: refused rows raise (unless turned off), others are ignored."""
    if row is None:
        return  # not a Nova key at all (free-form Glance property or custom extra spec)
    if row.status == REFUSED and picked.value.strip().lower() not in {"false", "0", "no", "off"}:
        raise draft.refuse(picked, row.note)
    draft.record(picked, Treatment.IGNORED, row.note)
