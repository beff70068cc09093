"""The embedded volume service wired into the all-in-one (decision 0057): the volume API under
``/volume``, its volumes made from the embedded image service's images, its events (a reimaged
volume) sent to the compute API in the same process."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from openkeel.api.app import ComputeApiApp
from openkeel.api.auth import Authenticator
from openkeel.api.context import RequestContext
from openkeel.api.policy import PolicyEnforcer
from openkeel.api.services import ApiServices
from openkeel.api.usecases.external_events import create_events
from openkeel.clients.image import Caller as ImageCaller
from openkeel.clients.image import ImageError
from openkeel.db.volume_store import VolumeStore
from openkeel.image_api.services import ImageApiServices, image_api_services
from openkeel.virt.loading import KUBEVIRT
from openkeel.volume.embedded.files import VolumeFiles
from openkeel.volume.embedded.service import (
    Caller,
    ClusterBacking,
    ImageCopy,
    ImageSource,
    NovaEvents,
    VolumeService,
)
from openkeel.volume.factory import provide_images, send_volume_events
from openkeel.volume_api.app import Identify, build_volume_app

LOG = logging.getLogger(__name__)


def volume_identity(authenticator: Authenticator) -> Identify:
    """Who calls the volume API: the compute API's authenticator turned into the volume
    service's caller (Cinder's admin is the admin role)."""

    def identify(headers: dict[str, str], request_id: str) -> Caller:
        context = authenticator.authenticate(headers, request_id)
        return Caller(context.project_id, context.user_id or "", "admin" in context.roles)

    return identify


def image_source(images: ImageApiServices) -> ImageSource:
    """Images as the volume service reads them: one the caller may see, active. An image
    whose bytes are not on disk (the all-in-one's seed image, a KubeVirt snapshot) gives a
    volume without its bytes (the simulated driver boots anything)."""

    def fetch(caller: Caller, image_id: str) -> ImageCopy | None:
        try:
            image = images.repository.find_visible(
                ImageCaller(caller.project_id, caller.is_admin), image_id
            )
        except ImageError:
            return None
        if image.status != "active":
            return None
        keep = {"image_id": image.id, "image_name": image.name or "",
                "container_format": image.container_format or "",
                "disk_format": image.disk_format or "", "checksum": image.checksum or "",
                "min_ram": str(image.min_ram), "min_disk": str(image.min_disk),
                "size": str(image.size or 0)}  # fmt: skip
        keep.update({k: str(v) for k, v in image.properties.items()})
        chunks = images.files.read(image.id) if images.files.has_data(image.id) else iter(())
        return ImageCopy(chunks, image.size or 0, image.min_disk, keep)

    return fetch


def volume_files(state_path: str) -> VolumeFiles:
    """Where the simulated back end keeps volume data: ``<state_path>/volumes``."""
    return VolumeFiles(Path(state_path) / "volumes")


def volume_service(
    api_db: sa.Engine,
    state_path: str,
    images: ImageSource | None = None,
    nova: NovaEvents | None = None,
    backing: ClusterBacking | None = None,
) -> VolumeService:
    """The embedded volume service over the API database (tables made when missing)."""
    store = VolumeStore(api_db)
    store.install()
    return VolumeService(store, volume_files(state_path), images, nova=nova, backing=backing)


def nova_events(services: ApiServices, enforcer: PolicyEnforcer) -> NovaEvents:
    """What Cinder's Nova notifier does (as the service it is): an event of a server (the
    ``volume-reimaged`` of a reimaged root volume) to the compute API's external events,
    which casts it to the server's host. Never fails the volume change it follows."""

    def send(server_uuid: str, name: str, tag: str) -> None:
        context = RequestContext(user_id="volume", project_id=None, roles=("admin", "service"),
                                 enforcer=enforcer)  # fmt: skip
        body = {"server_uuid": server_uuid, "name": name, "tag": tag}
        try:
            answers, _ = create_events(services, context, [body])
        except Exception:
            LOG.exception("Reporting %s of volume %s to compute failed", name, tag)
            return
        if answers[0].code != 200:
            LOG.warning("Compute answered %s to %s of volume %s for server %s",
                        answers[0].code, name, tag, server_uuid)  # fmt: skip

    return send


def cluster_volumes(conf: Any) -> ClusterBacking | None:
    """With the KubeVirt driver: the volumes' DataVolumes in the cluster (decision 0071)."""
    if conf.compute_driver != KUBEVIRT:
        return None
    from openkeel.virt.kubevirt.client import KubeClient, KubeConfig
    from openkeel.virt.kubevirt.volume_backing import ClusterVolumes

    kube = conf.kubevirt
    return ClusterVolumes(
        lambda: KubeClient(KubeConfig.load(kube.kubeconfig, kube.kubeconfig_context)),
        kube.namespace_scheme,
        kube.storage_class or "",
    )


def with_volume_api(app: Any, compute: ComputeApiApp, services: ApiServices) -> Any:
    """``app`` with the embedded volume API under ``/volume``; its volume-reimaged events go
    to ``compute``'s external events."""
    state_path = services.conf.state_path
    images = image_source(image_api_services(services.api_db, Path(state_path)))
    nova = nova_events(services, compute.enforcer)
    backing = cluster_volumes(services.conf)
    service = volume_service(services.api_db, state_path, images, nova, backing)
    provide_images(services.conf, services.api_db, images)  # boot from volume: image→volume
    send_volume_events(services.conf, services.api_db, nova)  # volume-backed rebuild (2.93)
    return build_volume_app(app, service, volume_identity(compute.authenticator))
