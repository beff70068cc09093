"""Configuration through oslo.config with Nova's option names and groups.

No module-level global: :func:`make_config` returns a fresh ``ConfigOpts`` that the composition
roots (``openkeel.cmd``) pass to everything they build.
"""

from __future__ import annotations

from collections.abc import Sequence

from oslo_config import cfg
from oslo_policy import opts as policy_opts

from openkeel.conf import (
    api,
    cinder,
    compute,
    conductor,
    consoles,
    database,
    default,
    glance,
    identity,
    log,
    metadata,
    neutron,
    notifications,
    observability,
    quota,
    scheduler,
    services,
)
from openkeel.conf import fake_driver as fake_driver_opts
from openkeel.conf import kubevirt as kubevirt_opts
from openkeel.conf import resize as resize_opts


def make_config(
    args: Sequence[str] = (),
    config_files: Sequence[str] = (),
    overrides: dict[str, object] | None = None,
    defaults: dict[str, object] | None = None,
) -> cfg.ConfigOpts:
    """A ConfigOpts with every OpenKeel option registered, parsed from ``config_files``.

    ``overrides`` and ``defaults`` map ``"group.option"`` (or ``"option"`` for DEFAULT) to a
    value: an override wins over the files, a default only stands where no file sets one.
    """
    conf = cfg.ConfigOpts()
    for module in (
        default,
        api,
        cinder,
        compute,
        conductor,
        consoles,
        database,
        glance,
        identity,
        log,
        metadata,
        neutron,
        notifications,
        observability,
        quota,
        services,
        scheduler,
        kubevirt_opts,
        fake_driver_opts,
        resize_opts,
    ):
        module.register(conf)
    # [oslo_policy] (policy_file, enforce_scope ...) is oslo.policy's own group.
    policy_opts.set_defaults(conf)
    for dotted, value in (defaults or {}).items():
        group, _, name = dotted.rpartition(".")
        conf.set_default(name, value, group=group or None)
    conf(
        list(args),
        project="openkeel",
        default_config_files=list(config_files),
        validate_default_values=True,
    )
    for dotted, value in (overrides or {}).items():
        group, _, name = dotted.rpartition(".")
        conf.set_override(name, value, group=group or None)
    return conf
