"""What the image API's use cases may reach, built once per process by the composition root."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from openkeel.db.image_files import ImageFiles
from openkeel.db.image_repository import ImageRepository


@dataclass(frozen=True)
class ImageApiServices:
    """The image rows (API database) and the image files (data directory)."""

    repository: ImageRepository
    files: ImageFiles


def image_files(data_root: Path) -> ImageFiles:
    """Where image data lives: ``<state_path>/images``."""
    return ImageFiles(data_root / "images")


def image_api_services(api_db: sa.Engine, data_root: Path) -> ImageApiServices:
    """The services over ``api_db`` with image files under ``data_root``."""
    return ImageApiServices(ImageRepository(api_db), image_files(data_root))
