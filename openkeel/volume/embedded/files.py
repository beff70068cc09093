"""The simulated back end's volume data: one sparse file per volume or snapshot under
``<state_path>/volumes`` (a snapshot's file is ``snapshot-<id>``). The volume service calls
this; nothing here knows Cinder's rules."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


class VolumeFiles:
    """Sparse files named after the volumes (and snapshots) they hold."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name

    def create(self, name: str, size: int) -> None:
        """An empty (sparse) file of ``size`` bytes."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self.path(name).open("wb") as out:
            out.truncate(size)

    def write(self, name: str, chunks: Iterable[bytes], size: int) -> None:
        """``chunks`` at the start of a file of ``size`` bytes (an image made a volume)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self.path(name).open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.truncate(max(size, out.tell()))

    def copy(self, source: str, name: str, size: int) -> None:
        """A copy of ``source`` grown to ``size`` bytes (sparse where the source has no file)."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.path(source).exists():
            self.create(name, size)
            return
        with self.path(source).open("rb") as src, self.path(name).open("wb") as out:
            for start, end in _data_extents(src.fileno()):
                src.seek(start)
                out.seek(start)
                left = end - start
                while left > 0:
                    chunk = src.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    out.write(chunk)
                    left -= len(chunk)
            out.truncate(max(size, os.fstat(src.fileno()).st_size))

    def resize(self, name: str, size: int) -> None:
        os.truncate(self.path(name), size)

    def delete(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)


def _data_extents(fd: int) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of ``fd`` that hold data (holes skipped: copies of sparse
    volumes stay sparse)."""
    end = os.fstat(fd).st_size
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < end:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError:  # ENXIO: no data past offset
            break
        stop = os.lseek(fd, start, os.SEEK_HOLE)
        extents.append((start, stop))
        offset = stop
    return extents
