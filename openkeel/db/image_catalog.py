"""The embedded image catalog: a Glance stand-in on one table of the API database.

Used by the all-in-one (and whenever ``[glance]`` does not locate Glance) so ``imageRef`` and
``/images`` work without Glance; the all-in-one's image API (:mod:`openkeel.image_api`) writes the
same tables, so an uploaded image boots. The tables (:mod:`openkeel.db.image_tables`) live outside
Nova's API schema and persist with the API database; see docs/decisions/0008 and 0034. It is the
storage of an embedded service, so it lives in the database layer: outbound clients
(``openkeel.clients``) never read the database.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from openkeel.clients.image import (
    Caller,
    Image,
    ImageBadRequest,
    ImageData,
    ImageNotAuthorized,
    ImageNotFound,
    glance_filters,
    parse_time,
)
from openkeel.db.image_files import ImageFiles, store_data
from openkeel.db.image_repository import ImageRepository, visible
from openkeel.db.image_tables import (
    images_table,
    install_tables,
    now,
    row_values,
)

# The image the all-in-one starts with (metadata only; a fixed id so docs and tests can use it).
DEFAULT_IMAGE = Image(
    id=str(uuid.uuid5(uuid.NAMESPACE_URL, "openkeel:image:cirros-0.6.3-x86_64-disk")),
    name="cirros-0.6.3-x86_64-disk",
    status="active",
    visibility="public",
    min_ram=0,
    min_disk=0,
    size=21692416,
    checksum="87617e24a5e30cb3b87fe8b3b9b0b4a6",
    container_format="bare",
    disk_format="qcow2",
    created_at=datetime.datetime(2024, 9, 26, 12, 0, 0),
    updated_at=datetime.datetime(2024, 9, 26, 12, 0, 0),
    properties={"hw_architecture": "x86_64", "os_distro": "cirros", "os_version": "0.6.3"},
)


def _since(text: str) -> datetime.datetime | None:
    """A ``changes-since`` time; Glance answers 400 to one it cannot parse."""
    try:
        return parse_time(text)
    except ValueError as exc:
        raise ImageBadRequest(f"Invalid time format for updated_at: {text}") from exc


def _matches(image: Image, key: str, value: str) -> bool:
    if key == "updated_at" and value.startswith("gte:"):
        since = _since(value[4:])
        return since is None or (image.updated_at is not None and image.updated_at >= since)
    if key in ("name", "status", "visibility", "owner", "disk_format", "container_format"):
        return str(getattr(image, key)) == value
    if key in ("min_ram", "min_disk", "size"):
        return str(getattr(image, key)) == value
    return key in image.properties and str(image.properties[key]) == value


def _or_zero(value: Any) -> Any:
    """A sort value: unset sorts as 0 (after the is-set flag); "" stays a string."""
    return 0 if value is None else value


class EmbeddedImageCatalog:
    """An :class:`~openkeel.clients.image.ImageService` over ``openkeel_images``."""

    def __init__(self, engine: sa.Engine, files: ImageFiles | None = None) -> None:
        self._engine = engine
        self._rows = ImageRepository(engine)
        # The image API's data files: a delete through Nova's proxy removes the data too.
        self._files = files

    def install(self, seed_default: bool = True) -> None:
        """Create the table when missing; a newly created catalog gets the default image."""
        if install_tables(self._engine) and seed_default:
            self.add(DEFAULT_IMAGE)

    def add(self, image: Image) -> Image:
        """Register an image (the all-in-one seed, snapshots, tests)."""
        stamp = now()
        values = row_values(image)
        values["created_at"] = image.created_at or stamp
        values["updated_at"] = image.updated_at or stamp
        with self._engine.begin() as conn:
            conn.execute(images_table.insert().values(**values))
        return self._rows.load(image.id)

    def get(self, caller: Caller, image_id: str) -> Image:
        """The image when the caller may see it (members see a shared image by id)."""
        return self._rows.find_visible(caller, image_id)

    def list(
        self,
        caller: Caller,
        filters: Mapping[str, str],
        limit: int | None = None,
        marker: str | None = None,
        sort: Sequence[tuple[str, str]] = (("created_at", "desc"), ("id", "desc")),
    ) -> list[Image]:
        """Visible images matching the filters, in Glance's order, after ``marker``."""
        wanted = glance_filters(filters)
        memberships = self._rows.memberships(caller.project_id)
        images = [
            image
            for image in self._rows.images()
            if visible(caller, image, memberships.get(image.id), listing=True)
            and all(_matches(image, key, value) for key, value in wanted.items())
        ]
        for key, direction in reversed(sort):
            images.sort(
                key=lambda i: (getattr(i, key) is not None, _or_zero(getattr(i, key))),
                reverse=direction == "desc",
            )
        if marker is not None:
            ids = [image.id for image in images]
            if marker not in ids:
                raise ImageBadRequest(f"Invalid marker. Image {marker} could not be found.")
            images = images[ids.index(marker) + 1 :]
        return images[:limit] if limit else images

    def _owned(self, caller: Caller, image_id: str) -> Image:
        image = self.get(caller, image_id)
        if not (caller.is_admin or (image.owner and image.owner == caller.project_id)):
            raise ImageNotAuthorized(image_id)
        return image

    def delete(self, caller: Caller, image_id: str) -> None:
        """Delete an image the caller owns (admins: any unprotected image)."""
        image = self._owned(caller, image_id)
        if image.protected:
            raise ImageNotAuthorized(image_id)
        self._rows.delete(image_id)
        if self._files is not None:
            self._files.delete(image_id)

    def update_properties(
        self, caller: Caller, image_id: str, properties: Mapping[str, Any], purge: bool
    ) -> Image:
        """Set (and with ``purge`` replace) the custom properties."""
        image = self._owned(caller, image_id)
        merged = dict(properties) if purge else {**image.properties, **properties}
        with self._engine.begin() as conn:
            conn.execute(
                images_table.update()
                .where(images_table.c.id == image_id)
                .values(properties=json.dumps(merged), updated_at=now())
            )
        return self._rows.load(image_id)

    def create(self, caller: Caller, image: Image) -> Image:
        """A queued image owned by the caller's project; shared with ``instance_owner``."""
        image_id = image.id or str(uuid.uuid4())
        created = self._rows.create(
            dataclasses.replace(image, id=image_id, status="queued", owner=caller.project_id)
        )
        owner = image.properties.get("instance_owner")
        if image.visibility == "shared" and owner:
            self._rows.add_member(image_id, str(owner))
        return created

    def upload(self, caller: Caller, image_id: str, data: ImageData) -> Image:
        """Store a snapshot's data (queued -> saving -> active, decision 0034's contract);
        data kept by the hypervisor (``data.chunks`` None) makes it active with its size."""
        image = self._owned(caller, image_id)
        values: dict[str, Any] = {
            "disk_format": data.disk_format,
            "container_format": data.container_format,
            "properties": {**image.properties, **data.properties},
        }
        if self._rows.update(image_id, {**values, "status": "saving"}, "queued") is None:
            raise ImageNotFound(image_id)
        if data.chunks is None:
            done = self._rows.update(image_id, {"status": "active", "size": data.size}, "saving")
        elif self._files is None:
            self._rows.update(image_id, {"status": "queued"}, "saving")
            raise ImageBadRequest(f"Image {image_id}: this catalog keeps no image data.")
        else:
            done = store_data(self._files, self._rows.update, image_id, data.disk_format, data.chunks)  # fmt: skip
        if done is None:
            raise ImageNotFound(image_id)
        result: Image = done
        return result
