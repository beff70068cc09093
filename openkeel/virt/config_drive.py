"""The config drive image: the metadata files (``openstack/<version>/...``, ``ec2/...``) in an
ISO 9660 image labelled ``config-2`` with Rock Ridge and Joliet names (what ``genisoimage -J
-r -V config-2`` makes for Nova), built in Python with pycdlib (decision 0058); or, with Nova's
deprecated ``[DEFAULT] config_drive_format = vfat``, a 64 MiB FAT file system labelled
``config-2`` with long names (what Nova's ``mkfs.vfat`` and copy make), built with pyfatfs.

Called by the drivers that attach a config drive as a file (the simulated driver).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pycdlib
from pyfatfs.PyFat import PyFat
from pyfatfs.PyFatFS import PyFatFS

VOLUME_LABEL = "config-2"
ISO9660 = "iso9660"
VFAT = "vfat"
FORMATS = (ISO9660, VFAT)
VFAT_SIZE = 64 * 1024 * 1024  # Nova's CONFIGDRIVESIZE_BYTES


def _iso_name(name: str, is_file: bool) -> str:
    """An ISO 9660 (level 4) name for ``name``; readers use the Rock Ridge/Joliet names."""
    clean = re.sub(r"[^A-Z0-9_.]", "_", name.upper())
    return f"{clean};1" if is_file else clean.replace(".", "_")


def iso_image(files: Iterable[tuple[str, bytes]]) -> bytes:
    """The ISO image holding ``files`` (relative paths, ``/``-separated)."""
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=4, joliet=3, rock_ridge="1.09", vol_ident=VOLUME_LABEL)
    made: set[PurePosixPath] = set()
    try:
        for path, content in files:
            parts = PurePosixPath(path).parts
            for depth in range(1, len(parts)):
                directory = PurePosixPath(*parts[:depth])
                if directory in made:
                    continue
                iso.add_directory(
                    iso_path="/" + "/".join(_iso_name(p, False) for p in directory.parts),
                    rr_name=directory.name,
                    joliet_path=f"/{directory}",
                )
                made.add(directory)
            iso_path = "/".join(_iso_name(p, False) for p in parts[:-1])
            iso.add_fp(
                io.BytesIO(content),
                len(content),
                iso_path=f"/{iso_path}/{_iso_name(parts[-1], True)}".replace("//", "/"),
                rr_name=parts[-1],
                joliet_path=f"/{path}",
            )
        out = io.BytesIO()
        iso.write_fp(out)
        return out.getvalue()
    finally:
        iso.close()


def write_drive(path: Path, files: Iterable[tuple[str, bytes]], fmt: str = ISO9660) -> None:
    """Write the config drive holding ``files`` at ``path`` in ``fmt`` (``iso9660``/``vfat``)."""
    if fmt == VFAT:
        write_vfat(path, files)
    elif fmt == ISO9660:
        path.write_bytes(iso_image(files))
    else:
        raise ValueError(f"Unknown config drive format {fmt!r}; one of {', '.join(FORMATS)}")


def write_vfat(path: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """A sparse 64 MiB FAT16 image at ``path``, labelled ``config-2``, holding ``files``."""
    with path.open("wb") as out:
        out.truncate(VFAT_SIZE)
    fat = PyFat()
    fat.mkfs(str(path), PyFat.FAT_TYPE_FAT16, size=VFAT_SIZE, label=VOLUME_LABEL)
    fat.close()
    drive = PyFatFS(str(path))
    try:
        for name, content in files:
            parent = str(PurePosixPath(name).parent)
            if parent != ".":
                drive.makedirs(parent, recreate=True)
            drive.writebytes(name, content)
    finally:
        drive.close()


def read_vfat(path: Path) -> dict[str, bytes]:
    """The files of a vfat config drive by path (tests, diagnostics)."""
    drive = PyFatFS(str(path), read_only=True)
    try:
        return {name.lstrip("/"): drive.readbytes(name) for name in drive.walk.files()}
    finally:
        drive.close()


def vfat_label(path: Path) -> str:
    """The volume label in a FAT12/16 boot sector (``BS_VolLab``, 11 bytes at offset 43)."""
    with path.open("rb") as drive:
        boot = drive.read(54)
    return boot[43:54].decode("ascii").strip()


def read_iso(image: bytes) -> dict[str, bytes]:
    """The files of a config drive image by Rock Ridge path (tests, diagnostics)."""
    iso = pycdlib.PyCdlib()
    iso.open_fp(io.BytesIO(image))
    try:
        found: dict[str, bytes] = {}
        for root, _dirs, names in iso.walk(rr_path="/"):
            for name in names:
                path = f"{root.rstrip('/')}/{name}"
                out = io.BytesIO()
                iso.get_file_from_iso_fp(out, rr_path=path)
                found[path.lstrip("/")] = out.getvalue()
        return found
    finally:
        iso.close()


def volume_label(image: bytes) -> str:
    """The image's volume identifier."""
    iso = pycdlib.PyCdlib()
    iso.open_fp(io.BytesIO(image))
    try:
        return str(iso.pvd.volume_identifier.decode().strip())
    finally:
        iso.close()
