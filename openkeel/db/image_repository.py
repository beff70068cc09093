"""Writes of the embedded image service: images, their status changes and their members.

The image API's use cases (:mod:`openkeel.image_api.usecases`) call this; it knows no rules about
who may do what, only rows. Status changes are compare-and-swap on the expected status, so an
upload racing a delete or another upload cannot mark an image active twice or resurrect it.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.clients.image import Caller, Image, ImageError, ImageNotFound
from openkeel.db.engine import reader
from openkeel.db.image_tables import (
    image_of,
    images_table,
    install_tables,
    members_table,
    now,
    row_values,
)


class ImageMemberNotFound(ImageError):
    """The project is not a member of the image."""

    def __init__(self, image_id: str, member_id: str) -> None:
        super().__init__(f"{member_id} is not a member of image {image_id}.")
        self.image_id, self.member_id = image_id, member_id


class ImageMemberExists(ImageError):
    """The project already is a member of the image."""

    def __init__(self, image_id: str, member_id: str) -> None:
        super().__init__(f"{member_id} is already a member of image {image_id}.")
        self.image_id, self.member_id = image_id, member_id


@dataclass(frozen=True)
class ImageMember:
    """One project an image is shared with, and whether it accepted."""

    image_id: str
    member_id: str
    status: str
    created_at: datetime.datetime
    updated_at: datetime.datetime


def _member(row: sa.Row[Any]) -> ImageMember:
    return ImageMember(**row._mapping)


# Columns written as JSON text.
_JSON_COLUMNS = {"properties": dict, "tags": list}


def _encoded(values: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(values)
    for name in _JSON_COLUMNS:
        if name in out:
            out[name] = json.dumps(list(out[name]) if name == "tags" else dict(out[name]))
    return out


def visible(caller: Caller, image: Image, member_status: str | None, listing: bool) -> bool:
    """Glance's visibility rule: public, own, shared with the caller (listed once accepted),
    community (by id only; listed when asked for), or anything for an admin."""
    if caller.is_admin or image.visibility == "public" or image.owner == caller.project_id:
        return True
    if image.visibility == "shared" and member_status is not None:
        return not listing or member_status == "accepted"
    return image.visibility == "community" and not listing


class ImageRepository:
    """Rows of ``openkeel_images`` and ``openkeel_image_members`` on the API database."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def install(self) -> None:
        """Create the tables (and missing columns) when needed."""
        install_tables(self._engine)

    def load(self, image_id: str) -> Image:
        """One image whoever owns it (ImageNotFound)."""
        with reader(self._engine).connect() as conn:
            row = conn.execute(images_table.select().where(images_table.c.id == image_id)).first()
        if row is None:
            raise ImageNotFound(image_id)
        return image_of(row)

    def find_visible(self, caller: Caller, image_id: str) -> Image:
        """The image when ``caller`` may see it, else ImageNotFound."""
        image = self.load(image_id)
        member_status = None
        if image.visibility == "shared":
            member_status = self.memberships(caller.project_id).get(image_id)
        if not visible(caller, image, member_status, listing=False):
            raise ImageNotFound(image_id)
        return image

    def images(self) -> list[Image]:
        """Every image (the embedded catalog is small: listing filters in memory)."""
        with reader(self._engine).connect() as conn:
            return [image_of(row) for row in conn.execute(images_table.select())]

    def create(self, image: Image) -> Image:
        """Insert a new image, stamped now."""
        stamp = now()
        values = {**row_values(image), "created_at": stamp, "updated_at": stamp}
        with self._engine.begin() as conn:
            conn.execute(images_table.insert().values(**values))
        return self.load(image.id)

    def update(
        self, image_id: str, values: Mapping[str, Any], expected_status: str | None = None
    ) -> Image | None:
        """Set columns (``properties``/``tags`` as dict/list); with ``expected_status`` only
        while the image still has it. None when the image is gone or its status moved on."""
        query = images_table.update().where(images_table.c.id == image_id)
        if expected_status is not None:
            query = query.where(images_table.c.status == expected_status)
        with self._engine.begin() as conn:
            changed = conn.execute(query.values(**_encoded(values), updated_at=now())).rowcount
        if not changed:
            return None
        return self.load(image_id)

    def delete(self, image_id: str) -> bool:
        """Delete the image and its members; False when it was already gone."""
        with self._engine.begin() as conn:
            conn.execute(members_table.delete().where(members_table.c.image_id == image_id))
            gone = conn.execute(images_table.delete().where(images_table.c.id == image_id))
        return bool(gone.rowcount)

    def members(self, image_id: str) -> list[ImageMember]:
        """The image's members, oldest first."""
        query = (
            members_table.select()
            .where(members_table.c.image_id == image_id)
            .order_by(members_table.c.created_at, members_table.c.member_id)
        )
        with reader(self._engine).connect() as conn:
            return [_member(row) for row in conn.execute(query)]

    def memberships(self, member_id: str | None) -> dict[str, str]:
        """The member status of project ``member_id`` by image id."""
        if member_id is None:
            return {}
        query = sa.select(members_table.c.image_id, members_table.c.status).where(
            members_table.c.member_id == member_id
        )
        with reader(self._engine).connect() as conn:
            return {row.image_id: row.status for row in conn.execute(query)}

    def member(self, image_id: str, member_id: str) -> ImageMember:
        """One membership (ImageMemberNotFound)."""
        query = members_table.select().where(
            members_table.c.image_id == image_id, members_table.c.member_id == member_id
        )
        with reader(self._engine).connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            raise ImageMemberNotFound(image_id, member_id)
        return _member(row)

    def add_member(self, image_id: str, member_id: str) -> ImageMember:
        """Share the image with a project, pending its answer (ImageMemberExists)."""
        stamp = now()
        try:
            with self._engine.begin() as conn:
                conn.execute(
                    members_table.insert().values(
                        image_id=image_id,
                        member_id=member_id,
                        status="pending",
                        created_at=stamp,
                        updated_at=stamp,
                    )
                )
        except sa.exc.IntegrityError as exc:
            raise ImageMemberExists(image_id, member_id) from exc
        return self.member(image_id, member_id)

    def set_member_status(self, image_id: str, member_id: str, status: str) -> ImageMember:
        """Record the member's answer (ImageMemberNotFound)."""
        query = (
            members_table.update()
            .where(members_table.c.image_id == image_id, members_table.c.member_id == member_id)
            .values(status=status, updated_at=now())
        )
        with self._engine.begin() as conn:
            if not conn.execute(query).rowcount:
                raise ImageMemberNotFound(image_id, member_id)
        return self.member(image_id, member_id)

    def remove_member(self, image_id: str, member_id: str) -> None:
        """Stop sharing with a project (ImageMemberNotFound)."""
        query = members_table.delete().where(
            members_table.c.image_id == image_id, members_table.c.member_id == member_id
        )
        with self._engine.begin() as conn:
            if not conn.execute(query).rowcount:
                raise ImageMemberNotFound(image_id, member_id)
