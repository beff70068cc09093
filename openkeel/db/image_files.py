"""Image data of the embedded image service: one file per image under the data directory.

Called by the image API's upload, download and delete use cases. A write goes to a temporary file
beside its final name and is renamed into place only once every byte is on disk (size and hashes
computed on the way), so a reader never sees a half-written image; an interrupted write leaves
only a temporary file, removed by :meth:`ImageFiles.discard` or at the next start
(:meth:`ImageFiles.sweep`, which also drops the data of images deleted meanwhile).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK = 64 * 1024
HASH_ALGO = "sha512"


@dataclass(frozen=True)
class StoredData:
    """What a finished write tells the image record."""

    size: int
    checksum: str  # md5, Glance's legacy ``checksum``
    os_hash_algo: str
    os_hash_value: str


class ImageFiles:
    """Image files in ``root`` (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, image_id: str) -> Path:
        """Where an image's data lives once written."""
        return self.root / image_id

    def _temporary(self, image_id: str) -> Path:
        return self.root / f".{image_id}.{uuid.uuid4().hex}.part"

    def write(self, image_id: str, chunks: Iterable[bytes]) -> tuple[Path, StoredData]:
        """Write ``chunks`` to a temporary file; returns it and what was written.

        The caller renames it into place with :meth:`commit` after recording the image as
        active, or removes it with :meth:`discard`. An exception from ``chunks`` (a client that
        went away) removes the temporary file and propagates.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        temporary = self._temporary(image_id)
        md5, digest, size = hashlib.md5(usedforsecurity=False), hashlib.new(HASH_ALGO), 0
        try:
            with temporary.open("wb") as out:
                for chunk in chunks:
                    out.write(chunk)
                    md5.update(chunk)
                    digest.update(chunk)
                    size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            self.discard(temporary)
            raise
        return temporary, StoredData(size, md5.hexdigest(), HASH_ALGO, digest.hexdigest())

    def commit(self, temporary: Path, image_id: str) -> None:
        """Put a finished temporary file in place (atomic on one file system)."""
        os.replace(temporary, self.path(image_id))

    @staticmethod
    def discard(temporary: Path) -> None:
        """Remove a temporary file, if it is still there."""
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()

    def read(self, image_id: str) -> Iterator[bytes]:
        """The image's data in chunks (FileNotFoundError when it has none)."""
        with self.path(image_id).open("rb") as data:
            while chunk := data.read(CHUNK):
                yield chunk

    def has_data(self, image_id: str) -> bool:
        """True when the image's data is on disk."""
        return self.path(image_id).is_file()

    def delete(self, image_id: str) -> None:
        """Remove the image's data, if any."""
        with contextlib.suppress(FileNotFoundError):
            self.path(image_id).unlink()

    def sweep(self, keep: Set[str]) -> None:
        """Remove temporary files left by a process that stopped mid-upload, and the data of
        images that no longer exist (ids not in ``keep``)."""
        if not self.root.is_dir():
            return
        for path in self.root.iterdir():
            if path.name.endswith(".part") or path.name not in keep:
                self.discard(path)


# (image id, column values, expected status) -> the updated image, or None when it moved on
StatusSwap = Callable[[str, dict[str, Any], str], Any]


def store_data(
    files: ImageFiles, swap: StatusSwap, image_id: str, disk_format: str, chunks: Iterable[bytes]
) -> Any:
    """The upload contract of decision 0034, shared by the image API's upload and the
    snapshot upload of the embedded catalog: queued -> saving (the caller checked it), the
    bytes to a temporary file, in place, saving -> active. A failed write puts the image back
    to queued; an image deleted meanwhile loses its data. Returns the active image, or None
    when the image was deleted during the upload."""
    try:
        temporary, stored = files.write(image_id, chunks)
    except BaseException:
        swap(image_id, {"status": "queued"}, "saving")
        raise
    files.commit(temporary, image_id)
    values = {
        "status": "active",
        "size": stored.size,
        "virtual_size": stored.size if disk_format == "raw" else None,
        "checksum": stored.checksum,
        "os_hash_algo": stored.os_hash_algo,
        "os_hash_value": stored.os_hash_value,
    }
    active = swap(image_id, values, "saving")
    if active is None:
        files.delete(image_id)
    return active
