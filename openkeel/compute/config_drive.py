"""The config drive's files for a server being built: the metadata service's documents
(``openstack/<version>/...``, ``ec2/<version>/...``) from the same builders, vendor data
included (decision 0058). The driver turns them into its drive (an ISO image, a KubeVirt
``cloudInitConfigDrive``).

Called by ``operations/build.py``, ``rebuild.py`` and ``shelve.py`` (unshelve) before they
spawn (Nova regenerates the drive then too); a fatal vendordata failure fails the operation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from oslo_config import cfg

from openkeel.clients.vendordata import (
    DynamicVendordata,
    VendordataRequest,
    VendordataSettings,
    static_vendordata,
)
from openkeel.domain.guest_metadata.record import from_instance, key_type_of
from openkeel.domain.guest_metadata.tree import MetadataTree, VendorData
from openkeel.domain.instances import Instance
from openkeel.virt.model import InstanceSpec


def required(conf: cfg.ConfigOpts, instance: Instance) -> bool:
    """The server gets a config drive: asked for on create, its image says
    ``img_config_drive=mandatory`` (kept in system metadata at create), or ``[DEFAULT]
    force_config_drive`` (Nova's ``configdrive.required_by``)."""
    mandatory = instance.system_metadata.get("image_img_config_drive") == "mandatory"
    return bool(instance.config_drive) or mandatory or bool(conf.force_config_drive)


def drive_files(
    conf: cfg.ConfigOpts, instance: Instance, network_info: Iterable[Mapping[str, Any]]
) -> tuple[tuple[str, bytes], ...]:
    """Every file of the server's config drive."""
    record = from_instance(
        replace(instance, network_info=tuple(network_info)),
        key_type_of(instance.key_data),
        conf.api.dhcp_domain,
    )
    settings = VendordataSettings.from_conf(conf)
    request = VendordataRequest.for_record(record)
    vendor = VendorData(
        static_vendordata(settings),
        lambda: DynamicVendordata(settings).fetch(request),
        settings.providers,
    )
    skip = tuple(conf.api.config_drive_skip_versions.split())
    return tuple(MetadataTree(record, vendor).config_drive_files(skip))


def attach(
    conf: cfg.ConfigOpts,
    instance: Instance,
    spec: InstanceSpec,
    network_info: Iterable[Mapping[str, Any]] | None = None,
) -> InstanceSpec:
    """``spec`` with the config drive's files when the server needs a drive."""
    if not required(conf, instance):
        return spec
    vifs = instance.network_info if network_info is None else network_info
    files = drive_files(conf, instance, vifs)
    return replace(spec, config_drive=True, config_drive_files=files)
