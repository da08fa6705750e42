"""Durable file writes for what memory keeps beside its index (snapshots, caches, exported models)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """Make the folder's entries (a created, renamed or deleted file) durable."""
    with contextlib.suppress(OSError):  # not every file system can open a folder
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and sync it to disk."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def replace_durably(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (a crash leaves the old file or the new one), durably."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        write_durably(temporary, data)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    fsync_dir(path.parent)
