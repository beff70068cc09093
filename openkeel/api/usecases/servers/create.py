"""``POST /servers``: validate against flavors, images, key pairs, zones and quotas, then record
the build (build requests, request specs, instance mappings) inside the quota claim and cast
``schedule_and_build_instances`` to the conductor.

Called by the servers create handler with a ``CreateServers`` command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.images import caller_of
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.api.usecases.servers import create_checks as checks
from openkeel.api.usecases.servers.commands import (
    NETWORKS_NONE,
    CreatedServers,
    CreateServers,
    RequestedLocation,
)
from openkeel.api.usecases.servers.create_building import build_instances, request_spec
from openkeel.api.usecases.servers.create_quota import claim_instances
from openkeel.api.usecases.servers.create_volumes import (
    MappingChecker,
    PreparedMappings,
    image_defined,
    is_volume_backed,
    transform,
)
from openkeel.clients.image import Image
from openkeel.db.repositories import (
    build_requests,
    instance_mappings,
    request_specs,
    server_extras,
)
from openkeel.domain.errors import Invalid, ServiceUnavailable
from openkeel.domain.flavors import Flavor, Viewer
from openkeel.domain.instances import BuildRequestNotFound, RequestSpecNotFound
from openkeel.domain.server_groups import ServerGroup
from openkeel.network.adapter import RequestedNetwork
from openkeel.network.factory import get_network_adapter
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.conductor import ScheduleAndBuildInstances
from openkeel.volume.adapter import VolumeContext
from openkeel.volume.factory import get_volume_adapter

POLICY = "os_compute_api:servers:%s"
_PASSWORD_CHARS = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def generate_password(length: int = 12) -> str:
    """A random admin password (Nova's alphabet without look-alike characters)."""
    return "".join(secrets.choice(_PASSWORD_CHARS) for _ in range(length))


def call_context(context: RequestContext) -> CallContext:
    """The RPC context of an API request."""
    return CallContext(
        context.user_id,
        context.project_id,
        context.roles,
        context.request_id,
        auth_token=context.auth_token,
    )


class ServerCreator:
    """Creates servers for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._conf = services.conf

    def _target(self, zone: str | None) -> dict[str, Any]:
        ctx = self._context
        return {"project_id": ctx.project_id, "user_id": ctx.user_id, "availability_zone": zone}

    def _authorize(self, cmd: CreateServers) -> RequestedLocation:
        ctx = self._context
        target = self._target(cmd.availability_zone)
        ctx.can(POLICY % "create", target)
        if cmd.trusted_certs:
            ctx.can(POLICY % "create:trusted_certs", target)
        zone, host, node = checks.parse_availability_zone(
            cmd.availability_zone, self._conf.default_schedule_zone
        )
        if host or node:
            ctx.can(POLICY % "create:forced_host", target)
            if host:
                zone = checks.zone_for_forced_host(self._services, zone, host)
        if cmd.requested_host or cmd.requested_node:
            ctx.can("compute:servers:create:requested_destination", target)
            if host or node:
                raise Invalid(
                    "One mechanism with host and/or hypervisor_hostname and another mechanism "
                    "with zone:host:node are mutually exclusive."
                )
        if cmd.block_device_mappings:
            ctx.can(POLICY % "create:attach_volume", target)
        if isinstance(cmd.networks, tuple) and cmd.networks:
            ctx.can(POLICY % "create:attach_network", target)
        return RequestedLocation(zone, host, node)

    def create(self, cmd: CreateServers) -> CreatedServers:
        """Accept the request and start the build; answers what the 202 body needs."""
        location = self._authorize(cmd)
        ctx = self._context
        viewer = Viewer(ctx.project_id, ctx.is_admin)
        chosen = checks.flavor(self._services, viewer, cmd.flavor_ref)
        self._check_networks(cmd)
        cmd = self._bounded(cmd)
        if cmd.hostname and cmd.max_count > 1:
            raise Invalid("Unable to allocate a single hostname to multiple instances")
        if location.zone and location.host is None:
            checks.zone_available(self._services, location.zone)
        checks.requested_destination(self._services, cmd.requested_host, cmd.requested_node)
        booted = self._image(cmd)
        mappings = transform(
            cmd.block_device_mappings, cmd.legacy_bdm, cmd.image_ref, cmd.max_count,
            image_defined(booted.properties) if booted is not None else (),
        )  # fmt: skip
        if booted is not None:
            self._image_fits(booted, chosen, is_volume_backed(mappings))
        checks.user_data(cmd.user_data)
        checks.security_groups(self._services, str(ctx.project_id), cmd.security_groups)
        cmd = self._validate_networks(cmd)
        key = checks.keypair(self._services, str(ctx.user_id), cmd.key_name)
        checker = self._checker()
        prepared = checker.prepare(mappings, chosen, cmd.image_ref, cmd.multiattach, location.zone)
        if prepared.volume_zone is not None:  # scheduled to the volumes' zone (cross_az_attach)
            location = dataclasses.replace(location, zone=prepared.volume_zone)
        engine = QuotaEngine(self._services)
        checks.limits(engine, str(ctx.project_id), cmd.metadata, cmd.personality)
        checks.zero_disk(ctx, chosen, prepared.volume_backed, self._target(location.zone))
        group = checks.server_group(self._services, viewer, cmd.scheduler_hints)
        password = cmd.admin_pass or generate_password(int(self._conf.password_length))
        reservation_id = f"r-{secrets.token_hex(4)}"
        built = _Built(booted or prepared.root_image, key, group, location, prepared, checker)
        return self._record_and_cast(cmd, chosen, built, password, reservation_id, engine)

    def _checker(self) -> MappingChecker:
        ctx = self._context
        volumes = get_volume_adapter(self._conf, self._services.api_db)
        as_user = VolumeContext(ctx.project_id, ctx.user_id, ctx.is_admin)
        return MappingChecker(self._services, volumes, as_user, caller_of(ctx))

    def _bounded(self, cmd: CreateServers) -> CreateServers:
        """max_count cut to ``[api] max_servers_per_request``; a min_count past it is a 400."""
        bound = int(self._conf.api.max_servers_per_request)
        if cmd.min_count > bound:
            raise Invalid(
                f"min_count {cmd.min_count} is more than the {bound} servers one request "
                "can build ([api] max_servers_per_request)."
            )
        if cmd.max_count > bound:
            return dataclasses.replace(cmd, max_count=bound)
        return cmd

    def _image(self, cmd: CreateServers) -> Image | None:
        if not cmd.image_ref:
            return None
        return checks.image(self._services, caller_of(self._context), cmd.image_ref)

    @staticmethod
    def _image_fits(found: Image, chosen: Flavor, volume_backed: bool) -> None:
        if volume_backed:
            # The root is a volume: only the memory is the flavor's (Nova's check).
            checks.image_fits(found, dataclasses.replace(chosen, root_gb=0))
        else:
            checks.image_fits(found, chosen)

    def _validate_networks(self, cmd: CreateServers) -> CreateServers:
        """The network adapter's checks (unknown network, address in use ...); it may lower
        ``max_count`` as Nova's port quota does."""
        if cmd.networks == NETWORKS_NONE:
            return cmd
        adapter = get_network_adapter(self._conf, self._services.api_db)
        if isinstance(cmd.networks, tuple):
            requested = [RequestedNetwork.from_primitive(n.to_primitive()) for n in cmd.networks]
        elif cmd.networks is not None:
            requested = [RequestedNetwork(network_id=cmd.networks)]
        else:
            requested = []
        ctx = self._context
        scope = None if ctx.is_admin else ctx.project_id
        allowed = adapter.validate_networks(requested, cmd.max_count, scope)
        cmd = dataclasses.replace(cmd, port_requests=adapter.port_resource_requests(requested))
        if allowed < cmd.max_count:
            return dataclasses.replace(cmd, max_count=max(allowed, cmd.min_count))
        return cmd

    @staticmethod
    def _check_networks(cmd: CreateServers) -> None:
        if not isinstance(cmd.networks, tuple) or cmd.max_count <= 1:
            return
        if any(n.fixed_ip for n in cmd.networks):
            raise Invalid(
                "Failed to launch instances: max_count cannot be greater than 1 if an "
                "fixed_ip is specified."
            )
        if any(n.port_id for n in cmd.networks):
            raise Invalid(
                "Failed to launch instances: Unable to launch multiple instances with a "
                "single configured port ID. Please launch your instance one by one with "
                "different ports."
            )

    def _record_and_cast(
        self,
        cmd: CreateServers,
        chosen: Flavor,
        built: _Built,
        password: str,
        reservation_id: str,
        engine: QuotaEngine,
    ) -> CreatedServers:
        ctx = self._context
        booted, group, location = built.booted, built.group, built.location
        group_uuid = group.uuid if group is not None else None
        claim = claim_instances(engine, ctx, chosen, cmd.min_count, cmd.max_count, group_uuid)
        # Existing volumes are reserved for the one server they may go to (a request for
        # several servers cannot name one), before the claim's transaction: the volume
        # service writes to the same database.
        first_uuid = new_uuid()
        reserved = built.checker.reserve(built.mappings.mappings, first_uuid)
        try:
            with claim as (conn, count):
                instances = build_instances(
                    cmd, ctx, chosen, booted, built.key, location.zone, reservation_id, count,
                    first_uuid,
                )  # fmt: skip
                volume_backed = built.mappings.volume_backed
                # Each spec and instance is serialized once, for its row and for the cast.
                specs = [
                    request_spec(
                        cmd, inst, chosen, booted, group, location, count, volume_backed
                    ).to_primitive()
                    for inst in instances
                ]
                stored = build_requests.add(
                    conn, instances, block_device_mappings=reserved, tags=cmd.tags
                )
                request_specs.add(conn, specs)
                instance_mappings.add_unscheduled(
                    conn, [(i.uuid, i.project_id, i.user_id) for i in instances]
                )
                if group_uuid is not None:
                    server_extras.add_group_members(conn, group_uuid, [i.uuid for i in instances])
        except Exception:
            built.checker.unreserve(reserved)
            raise
        if isinstance(group, ServerGroup):
            added = [i.uuid for i in instances]
            joined = dataclasses.replace(group, members=(*group.members, *added))
            self._services.notifier.server_group("add_member", joined, members=added)
        self._cast(cmd, instances, stored, specs, booted, password, built.checker)
        return CreatedServers(
            instances[0].uuid, reservation_id, password, bool(instances[0].auto_disk_config)
        )

    def _cast(
        self,
        cmd: CreateServers,
        instances: list[Any],
        stored: list[dict[str, Any]],
        specs: list[dict[str, Any]],
        booted: Image | None,
        password: str,
        checker: MappingChecker,
    ) -> None:
        conductor = getattr(self._services, "conductor", None)
        if conductor is None:
            return  # API-only deployment under test: the builds stay in BUILD.
        networks: list[Mapping[str, Any]] | None
        if cmd.networks is None:
            networks = None
        elif isinstance(cmd.networks, str):
            networks = [{"network_id": cmd.networks, "port_id": None, "address": None, "tag": None}]
        else:
            networks = [n.to_primitive() for n in cmd.networks]
        try:
            self._send(conductor, cmd, instances, stored, specs, booted, password, networks)
        except Exception as exc:
            # Nothing will ever take these build requests: withdraw them (and the quota they
            # hold) rather than leave the servers in BUILD. If even that fails, the conductor's
            # orphan sweep settles them later.
            withdraw_build_requests(
                self._services.api_db, [i.uuid for i in instances], checker.unreserve
            )
            raise ServiceUnavailable(
                "The build request could not be handed to the conductor "
                f"({type(exc).__name__}: {exc}); no server was created. Retry later."
            ) from exc

    def _send(
        self,
        conductor: Any,
        cmd: CreateServers,
        instances: list[Any],
        stored: list[dict[str, Any]],
        specs: list[dict[str, Any]],
        booted: Image | None,
        password: str,
        networks: list[Mapping[str, Any]] | None,
    ) -> None:
        message = ScheduleAndBuildInstances(
            instance_uuids=tuple(i.uuid for i in instances),
            request_specs=tuple(specs),
            image=_image_meta(booted),
            admin_password=password,
            requested_networks=None if networks is None else tuple(networks),
        )
        conductor.cast(call_context(self._context), message)


def withdraw_build_requests(
    api_db: sa.Engine,
    uuids: list[str],
    release: Callable[[Sequence[Mapping[str, Any]]], None] | None = None,
) -> list[str]:
    """Drop the build requests of servers not yet scheduled (with their request specs,
    mappings and group memberships) in one transaction; the uuids that had one. A build
    request already gone was taken by the conductor (or settled by its sweep). ``release``
    then gets the block device mappings of those withdrawn (their reserved volumes)."""
    withdrawn = []
    mappings: list[Mapping[str, Any]] = []
    with api_db.begin() as conn:
        for uuid in uuids:
            found = build_requests.find(conn, uuid)
            try:
                build_requests.delete(conn, uuid)
            except BuildRequestNotFound:
                continue
            if found is not None:
                mappings.extend(found.block_device_mappings)
            with contextlib.suppress(RequestSpecNotFound):
                request_specs.delete(conn, uuid)
            instance_mappings.delete(conn, uuid)
            withdrawn.append(uuid)
        server_extras.remove_group_members(conn, withdrawn)
    if release is not None and mappings:
        release(mappings)
    return withdrawn


@dataclasses.dataclass(frozen=True)
class _Built:
    """What the checks found, for recording the build."""

    booted: Image | None
    key: Any
    group: Any
    location: RequestedLocation
    mappings: PreparedMappings
    checker: MappingChecker


def _image_meta(found: Image | None) -> dict[str, Any]:
    if found is None:
        return {}
    return {
        "id": found.id,
        "name": found.name,
        "status": found.status,
        "min_ram": found.min_ram,
        "min_disk": found.min_disk,
        "size": found.size,
        "container_format": found.container_format,
        "disk_format": found.disk_format,
        "properties": dict(found.properties),
    }


def new_uuid() -> str:
    """A fresh server id."""
    return str(uuid.uuid4())


__all__ = ["NETWORKS_NONE", "ServerCreator", "generate_password", "new_uuid"]
