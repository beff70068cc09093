"""Image data: upload (``PUT /v2/images/{id}/file``) and download (``GET .../file``).

Called by the ``image_data`` resource. The contract of :func:`upload`: an image is marked
``active`` only after its whole data sits under its final name; until then it is ``saving``; an
upload that fails or is cut off leaves no file in place and puts the image back to ``queued`` so
it can be uploaded again. Every status change is a compare-and-swap, so two uploads cannot both
win, and an image deleted mid-upload stays deleted (410, its data removed).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from openkeel.clients.image import Caller, Image
from openkeel.db.image_files import store_data
from openkeel.image_api.faults import BadRequest, Conflict, Forbidden, Gone
from openkeel.image_api.services import ImageApiServices
from openkeel.image_api.usecases.images import find, owned


def upload(
    services: ImageApiServices, caller: Caller, image_id: str, chunks: Iterable[bytes]
) -> Image:
    """Store the data of a queued image and make it active."""
    image = owned(services, caller, image_id, "upload data to")
    if not (image.disk_format and image.container_format):
        raise BadRequest(
            "Properties disk_format, container_format must be set prior to saving data."
        )
    repo = services.repository
    if image.status != "queued" or repo.update(image_id, {"status": "saving"}, "queued") is None:
        raise Conflict(
            f"Image {image_id} is {image.status}: data can only be uploaded to a queued image."
        )
    active: Image | None = store_data(
        services.files, repo.update, image_id, image.disk_format, chunks
    )
    if active is None:
        raise Gone(
            f"Image {image_id} could not be found after upload: it was deleted during the upload."
        )
    return active


def download(
    services: ImageApiServices, caller: Caller, image_id: str
) -> tuple[Image, Iterator[bytes] | None]:
    """The image and its data (None: it has none yet, Glance's 204)."""
    image = find(services, caller, image_id)
    if image.status == "deactivated" and not caller.is_admin:
        raise Forbidden(
            "The requested image has been deactivated. Image data download is forbidden."
        )
    if image.status not in ("active", "deactivated") or not services.files.has_data(image_id):
        return image, None
    return image, services.files.read(image_id)


def recover(services: ImageApiServices) -> None:
    """At start-up: uploads cut off by a stop leave their images queued, not saving forever,
    and no data file outlives its image."""
    services.repository.install()
    images = services.repository.images()
    services.files.sweep({image.id for image in images})
    for image in images:
        if image.status == "saving":
            services.repository.update(image.id, {"status": "queued"}, "saving")
