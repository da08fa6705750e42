"""Durable file writes: every file the game keeps (saves, settings, memory's snapshot and caches) goes through here.

A write is synced before it is trusted, a replacement is atomic (a crash leaves
the old file or the new one, never a mix), and the folder is synced after a
rename so the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def sync_folder(folder: Path) -> None:
    """Make the folder's entries (a created, renamed or deleted file) durable, where the platform allows it."""
    with contextlib.suppress(OSError):  # not every platform or file system can open or sync a folder
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def write_synced(path: Path, data: bytes, *, mode: int = 0o644, exclusive: bool = False) -> None:
    """Write ``data`` to ``path`` and sync it to disk (``exclusive``: ``path`` must not exist yet)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        write_synced(temporary, data)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    sync_folder(path.parent)
