"""The compute API's image proxy: images and their metadata through the image service.

Called by the ``images`` and ``image_metadata`` resources. Translates the image adapter's
errors into Nova's faults and applies the ``metadata_items`` quota to image properties.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.quotas import effective_limit
from openkeel.clients.image import (
    Caller,
    GlanceClient,
    Image,
    ImageBadRequest,
    ImageNotAuthorized,
    ImageNotFound,
    ImageService,
    ImageServiceUnavailable,
    glance_from_conf,
)
from openkeel.db.image_catalog import EmbeddedImageCatalog
from openkeel.domain.errors import Forbidden, Invalid, NotFound, OverQuota, ServiceUnavailable

NOT_FOUND = "Image not found."

_install_lock = threading.Lock()
_catalogs: weakref.WeakKeyDictionary[sa.Engine, EmbeddedImageCatalog] = weakref.WeakKeyDictionary()


def glance_client(glance: Any) -> GlanceClient | None:
    """Glance as ``[glance]`` locates it, or None (decision 0034)."""
    return glance_from_conf(glance)


def image_service(services: ApiServices) -> ImageService:
    """The configured image service: ``services.images``, else Glance when ``[glance]``
    locates it, else the embedded catalog on the API database (installed on first use)."""
    if services.images is not None:
        service: ImageService = services.images
        return service
    # The composition roots build the Glance client once (services.images); this is for
    # services assembled without them (tests, tools).
    glance = glance_client(services.conf.glance)
    if glance is not None:
        return glance
    catalog = _catalogs.get(services.api_db)
    if catalog is None:
        with _install_lock:  # concurrent first requests must not see a half-seeded catalog
            catalog = _catalogs.get(services.api_db)
            if catalog is None:
                catalog = EmbeddedImageCatalog(services.api_db)
                catalog.install()
                _catalogs[services.api_db] = catalog
    return catalog


def caller_of(context: RequestContext) -> Caller:
    """Who asks the image service: project, admin flag, token and service catalog."""
    return Caller(context.project_id, context.is_admin, context.auth_token, context.service_catalog)


@contextmanager
def _translated(forbidden: str | None = None) -> Iterator[None]:
    """Adapter errors as Nova's faults (``forbidden``: the 403 text, default the adapter's)."""
    try:
        yield
    except ImageNotFound as err:
        raise NotFound(NOT_FOUND) from err
    except ImageNotAuthorized as err:
        raise Forbidden(forbidden or str(err)) from err
    except ImageBadRequest as err:
        raise Invalid(str(err)) from err
    except ImageServiceUnavailable as err:
        raise ServiceUnavailable(str(err)) from err


class ImageProxy:
    """Images as the compute API shows them, for one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._services = services
        self._context = context
        self._images = image_service(services)
        self._caller = caller_of(context)

    def get(self, image_id: str) -> Image:
        """One image (404 "Image not found.")."""
        with _translated():
            return self._images.get(self._caller, image_id)

    def list(
        self, filters: Mapping[str, str], limit: int | None, marker: str | None
    ) -> list[Image]:
        """A page of visible images (400 with the image service's message on a bad query)."""
        with _translated():
            return self._images.list(self._caller, filters, limit, marker)

    def create(self, image: Image) -> Image:
        """Register a queued image (a snapshot or backup about to be uploaded)."""
        with _translated():
            return self._images.create(self._caller, image)

    def delete(self, image_id: str) -> None:
        """Delete an image (403 when the image service refuses)."""
        with _translated("You are not allowed to delete the image."):
            self._images.delete(self._caller, image_id)

    def metadata(self, image_id: str) -> dict[str, Any]:
        """The image's properties (Nova's image metadata)."""
        with _translated():
            return dict(self._images.get(self._caller, image_id).properties)

    def set_metadata(
        self, image_id: str, items: Mapping[str, Any], replace: bool
    ) -> dict[str, Any]:
        """Merge ``items`` into the properties (or replace them all), within the quota."""
        with _translated():
            current = self._images.get(self._caller, image_id).properties
            merged = dict(items) if replace else {**current, **items}
            self._check_quota(merged)
            return dict(
                self._images.update_properties(self._caller, image_id, merged, True).properties
            )

    def delete_metadata(self, image_id: str, key: str) -> None:
        """Remove one property (404 "Invalid metadata key" when absent)."""
        with _translated():
            current = dict(self._images.get(self._caller, image_id).properties)
            if key not in current:
                raise NotFound("Invalid metadata key")
            del current[key]
            self._images.update_properties(self._caller, image_id, current, True)

    def _check_quota(self, properties: Mapping[str, Any]) -> None:
        if not properties:
            return
        limit = effective_limit(
            self._services, self._context.project_id or "", self._context.user_id, "metadata_items"
        )
        if 0 <= limit < len(properties):
            raise OverQuota("Image metadata limit exceeded")
