"""Checks of ``POST /servers`` that need lookups: flavor, image, key pair, availability zone
and forced host, server group hint, metadata/personality limits; with Nova's 400/403 texts.

Called by ``create.py`` only.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from openkeel.api.services import ApiServices
from openkeel.api.usecases.availability_zones import AvailabilityZoneService
from openkeel.api.usecases.images import image_service
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.clients.image import Caller, Image, ImageNotFound
from openkeel.db.engine import reader
from openkeel.db.repositories import host_mappings, server_extras
from openkeel.db.repositories.availability_zones import zones_by_host
from openkeel.db.repositories.flavors import FlavorRepository
from openkeel.db.repositories.keypairs import KeyPairRepository
from openkeel.db.repositories.server_groups import ServerGroupRepository
from openkeel.domain.errors import ComputeError, Forbidden, Invalid, OverQuota
from openkeel.domain.flavors import Flavor, Viewer
from openkeel.domain.instances import FlavorSnapshot, HostMappingNotFound
from openkeel.domain.keypairs import KeyPair
from openkeel.domain.server_groups import ServerGroup
from openkeel.network.factory import get_network_adapter


def flavor(services: ApiServices, viewer: Viewer, flavor_id: str) -> Flavor:
    """The flavor named by ``flavorRef``: 400 when unknown or disabled."""
    try:
        found = FlavorRepository(services.api_db).get(viewer, flavor_id)
    except ComputeError as err:
        raise Invalid(f"Flavor {flavor_id} could not be found.") from err
    if found.disabled:
        raise Invalid(f"Flavor {found.id} could not be found.")
    return found


def image(services: ApiServices, caller: Caller, image_ref: str) -> Image:
    """The image to boot: 400 when unknown or not active."""
    image_id = image_ref.rstrip("/").rsplit("/", 1)[-1]
    try:
        found = image_service(services).get(caller, image_id)
    except ImageNotFound as err:
        raise Invalid("Can not find requested image") from err
    if found.status != "active":
        raise Invalid(f"Image {found.id} is not active.")
    return found


def image_fits(found: Image, chosen: Flavor | FlavorSnapshot) -> None:
    """Nova's min_ram/min_disk/size checks against the flavor (non volume-backed boot)."""
    if chosen.memory_mb < found.min_ram:
        raise Invalid("Flavor's memory is too small for requested image.")
    if chosen.root_gb == 0:
        return
    gib = 1024**3
    if found.size is not None and found.size > chosen.root_gb * gib:
        raise Invalid(
            f"Flavor's disk is too small for requested image. Flavor disk is "
            f"{chosen.root_gb * gib} bytes, image is {found.size} bytes."
        )
    if found.min_disk > chosen.root_gb:
        raise Invalid(
            "Flavor's disk is smaller than the minimum size specified in image metadata. "
            f"Flavor disk is {chosen.root_gb * gib} bytes, minimum size is "
            f"{found.min_disk * gib} bytes."
        )


def keypair(services: ApiServices, user_id: str, name: str | None) -> KeyPair | None:
    """The key pair named by ``key_name``: 400 when the user has none of that name."""
    if name is None:
        return None
    found = KeyPairRepository(services.api_db).get(user_id, name)
    if found is None:
        raise Invalid("Invalid key_name provided.")
    return found


def user_data(value: str | None) -> None:
    """Nova decodes user data once to reject malformed base64."""
    if not value:
        return
    try:
        base64.b64decode(value.encode("utf-8"), validate=False)
    except (binascii.Error, ValueError) as err:
        raise Invalid("User data needs to be valid base 64.") from err


def parse_availability_zone(
    value: str | None, default_zone: str | None
) -> tuple[str | None, str | None, str | None]:
    """``az``, ``az:host``, ``az:host:node`` or ``az::node`` -> (zone, host, node)."""
    host = node = None
    zone = value
    if value and ":" in value:
        colons = value.count(":")
        if colons == 1:
            zone, host = value.split(":")
        elif colons == 2 and "::" in value:
            zone, node = value.split("::")
        elif colons == 2:
            zone, host, node = value.split(":")
        else:
            raise Invalid("Unable to parse availability_zone")
    return zone or default_zone, host or None, node or None


def server_group(
    services: ApiServices, viewer: Viewer, hints: Mapping[str, Any]
) -> ServerGroup | None:
    """The group of the ``group`` hint: 400 when it does not exist or, for a non-admin, belongs
    to another project (Nova's project-scoped ``InstanceGroup.get_by_uuid``)."""
    raw = hints.get("group")
    if not raw:
        return None
    group_uuid = raw[0] if isinstance(raw, list) else raw
    scope = None if viewer.is_admin else (viewer.project_id or "")
    found = ServerGroupRepository(services.api_db).get(group_uuid, scope)
    if found is None:
        raise Invalid(f"Instance group {group_uuid} could not be found.")
    return found


def security_groups(services: ApiServices, project_id: str, names: tuple[str, ...] | None) -> None:
    """Every requested security group exists in the project (Nova's
    ``_check_requested_secgroups``: ``default`` is taken as is, others are looked up)."""
    wanted = [name for name in names or () if name != "default"]
    if not wanted:
        return
    adapter = get_network_adapter(services.conf, services.api_db)
    for name in wanted:
        adapter.find_security_group(project_id, name)


def limits(
    engine: QuotaEngine,
    project_id: str,
    metadata: Mapping[str, str],
    files: tuple[tuple[str, str], ...],
) -> None:
    """metadata_items and injected_file* limits (403 OverQuota with Nova's messages)."""
    if engine.noop or not (metadata or files):
        return
    allowed = engine.limits(project_id)
    if metadata and 0 <= allowed["metadata_items"] < len(metadata):
        raise OverQuota(f"Maximum number of metadata items exceeds {allowed['metadata_items']}")
    if not files:
        return
    if 0 <= allowed["injected_files"] < len(files):
        raise OverQuota("Personality file limit exceeded")
    path_limit = allowed["injected_file_path_bytes"]
    content_limit = allowed["injected_file_content_bytes"]
    if 0 <= path_limit < max(len(path) for path, _ in files):
        raise OverQuota(f"Personality file path exceeds maximum {path_limit}")
    if 0 <= content_limit < max(len(content) for _, content in files):
        raise OverQuota(f"Personality file content exceeds maximum {content_limit}")


def zero_disk(context: Any, chosen: Flavor, volume_backed: bool, target: dict[str, Any]) -> None:
    """A 0-disk flavor boots from an image only when policy allows it (403 otherwise)."""
    if chosen.root_gb == 0 and not volume_backed:
        rule = "os_compute_api:servers:create:zero_disk_flavor"
        if not context.can(rule, target, fatal=False):
            raise Forbidden("Only volume-backed servers are allowed for flavors with zero disk.")


def requested_destination(services: ApiServices, host: str | None, node: str | None) -> None:
    """2.74 ``host``/``hypervisor_hostname`` must name a known compute (400 otherwise)."""
    if not host and not node:
        return
    if host:
        with reader(services.api_db).connect() as api:
            try:
                mapping = host_mappings.get(api, host)
            except HostMappingNotFound:
                raise Invalid(f"Compute host {host} could not be found.") from None
        if node:
            engine = services.cell_dbs[mapping.cell_uuid]
            with reader(engine).connect() as conn:
                if not server_extras.compute_node_exists(conn, host, node):
                    raise Invalid(f"Compute host {node} could not be found.")
        return
    for engine in (services.cell_dbs or {}).values():
        with reader(engine).connect() as conn:
            if server_extras.compute_node_exists(conn, None, str(node)):
                return
    raise Invalid(f"Compute host {node} could not be found.")


def zone_available(services: ApiServices, zone: str) -> None:
    """A requested zone must have an enabled service (Nova's get_only_available zones)."""
    names = {z.name for z in AvailabilityZoneService(services).summary() if z.available}
    if zone not in names:
        raise Invalid("The requested availability zone is not available")


def zone_for_forced_host(services: ApiServices, zone: str | None, host: str) -> str | None:
    """Nova's rule for ``zone:host``: keep the zone only when the host is in it (or both are
    the default zone); otherwise drop it so the host's own zone applies."""
    with reader(services.api_db).connect() as api:
        zones = sorted(zones_by_host(api, [host]).get(host, ()))
    default = services.conf.default_availability_zone
    if not zones:
        return zone if zone == default else None
    host_zone = zones[0]
    return zone if zone == host_zone else None
