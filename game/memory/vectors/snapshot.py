"""The local index's snapshot on disk: each collection's copy as two files, named by a manifest.

The files live in ``<data>/.index.mirror`` (``chroma.snapshot_dir``), written only by the process that holds the
index (``chroma.IndexLock``). Two manifests name them:

- ``clean`` (:data:`chroma.SNAPSHOT_MARKER`), written at a clean close once every write has reached Chroma: the
  files are what the index holds, with the index's fingerprint (:func:`index_fingerprint`). The holder's next
  start reads its vectors from them without importing Chroma. Any open of Chroma renames it to ``published``
  first (``chroma.invalidate_snapshot``): whoever opens it may write.
- ``published`` (:data:`chroma.PUBLISHED`): the latest snapshot, not necessarily all the index holds. The holder
  also writes it while the game is idle (``mirror.PUBLISH_EVERY_S``). A second process that finds the index held
  (a reader, ``MirroredStore.open_reader``) reads its vectors from ``clean`` or else ``published`` and never
  waits for the holder: a vector's id carries a digest of its text (``hybrid.HybridIndex.vector_id``), so a
  vector taken at any time is right for its id, and what a reader lacks it embeds, as any game does.

A manifest names every file with its checksum; a file that cannot be read, or fails its checksum, is a
collection read elsewhere (Chroma for the holder; the manifest again, then nothing, for a reader), never a crash.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from game.files import replace_durably, write_synced
from game.memory.vectors.chroma import PUBLISHED, SNAPSHOT_MARKER, snapshot_dir

log = logging.getLogger("storyecho.memory")

SNAPSHOT_VERSION = 1

Entries = dict[str, dict[str, Any]]
"""A manifest's collections: the name of each, with its files, checksums, count and dimension."""


@dataclass(frozen=True)
class CollectionFiles:
    """One collection as its snapshot holds it."""

    ids: list[str]
    matrix: np.ndarray
    metadatas: list[dict[str, Any]]
    meta: dict[str, Any] | None
    """The collection's recorded space (``stores.space_metadata``)."""


def index_fingerprint(index_dir: Path) -> list[list[Any]] | None:
    """Every file of the index folder with its size and modification time (None when the folder is missing).

    A clean snapshot is valid only for the index it was taken of: one deleted, truncated, replaced or written
    by anything else since (a Chroma open that wrote, another tool) no longer matches.
    """
    if not index_dir.is_dir():
        return None
    found: list[list[Any]] = []
    for root, _, files in os.walk(index_dir):
        for name in files:
            path = Path(root) / name
            info = path.stat()
            found.append([path.relative_to(index_dir).as_posix(), info.st_size, info.st_mtime_ns])
    return sorted(found)


def read_manifest(index_dir: Path, *, reader: bool = False) -> Entries | None:
    """The collections of a usable manifest, or None.

    The holder (``reader`` False) trusts only ``clean``, and only when it fits the index; a reader takes
    ``clean`` or else ``published``, whatever the index holds since.
    """
    folder = snapshot_dir(index_dir)
    for name in (SNAPSHOT_MARKER, PUBLISHED) if reader else (SNAPSHOT_MARKER,):
        path = folder / name
        try:
            manifest = orjson.loads(path.read_bytes())
            if manifest.get("version") != SNAPSHOT_VERSION:
                raise ValueError(f"version {manifest.get('version')!r}, not {SNAPSHOT_VERSION}")
            if not reader and manifest.get("index") != index_fingerprint(index_dir):
                raise ValueError("the index changed since it was taken")
            return {str(collection): dict(entry) for collection, entry in manifest["collections"].items()}
        except FileNotFoundError:
            continue
        except Exception as exc:  # noqa: BLE001 - an unusable snapshot means reading elsewhere, never a crash
            log.warning("the memory index snapshot %s is not usable (%s); reading the index instead", path, exc)
    return None


def read_collection(index_dir: Path, collection: str, entry: dict[str, Any]) -> CollectionFiles:
    """The collection as the files ``entry`` names hold it.

    Raises:
        OSError: a file is missing or unreadable.
        ValueError: a checksum does not match, or the files disagree.
    """
    folder = snapshot_dir(index_dir)
    vectors = (folder / entry["vectors"]).read_bytes()
    records = (folder / entry["records"]).read_bytes()
    if zlib.crc32(vectors) != entry["vectors_crc"] or zlib.crc32(records) != entry["records_crc"]:
        raise ValueError("its checksum does not match")
    saved = orjson.loads(records)
    ids, metadatas, count = list(saved["ids"]), list(saved["metadatas"]), int(entry["count"])
    if saved["collection"] != collection or len(ids) != count or len(metadatas) != count:
        raise ValueError("its files disagree")
    matrix = np.frombuffer(vectors, dtype=np.float32).reshape(count, int(entry["dimension"]))
    meta = saved["meta"]
    return CollectionFiles(ids, matrix, [dict(m) for m in metadatas], dict(meta) if meta is not None else None)


def write_collections(index_dir: Path, collections: dict[str, CollectionFiles]) -> Entries:
    """Write each collection's files (synced); their manifest entries. Only the index's holder calls this."""
    folder = snapshot_dir(index_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = f"{os.getpid()}-{time.time_ns()}"
    entries: Entries = {}
    for number, (name, files) in enumerate(sorted(collections.items())):
        vectors = np.ascontiguousarray(files.matrix, dtype=np.float32).tobytes()
        records = orjson.dumps({"collection": name, "ids": files.ids, "metadatas": files.metadatas, "meta": files.meta})
        base = f"{stamp}-{number}"
        write_synced(folder / f"{base}.f32", vectors)
        write_synced(folder / f"{base}.json", records)
        entries[name] = {
            "vectors": f"{base}.f32",
            "records": f"{base}.json",
            "vectors_crc": zlib.crc32(vectors),
            "records_crc": zlib.crc32(records),
            "count": len(files.ids),
            "dimension": int(files.matrix.shape[1]) if files.matrix.ndim == 2 else 0,
        }
    return entries


def write_manifest(index_dir: Path, entries: Entries, *, clean: bool) -> None:
    """Name ``entries``' files in a manifest (durably), then delete every file no manifest names.

    ``clean``: every write has reached the index, so the files are what it holds: the ``clean`` manifest with the
    index's fingerprint, and ``published`` goes (a reader takes ``clean`` first). Else ``published``.
    """
    folder = snapshot_dir(index_dir)
    manifest: dict[str, Any] = {"version": SNAPSHOT_VERSION, "collections": entries}
    if clean:
        manifest["index"] = index_fingerprint(index_dir)
    replace_durably(folder / (SNAPSHOT_MARKER if clean else PUBLISHED), orjson.dumps(manifest))
    if clean:
        with contextlib.suppress(FileNotFoundError):
            (folder / PUBLISHED).unlink()
    named = {SNAPSHOT_MARKER, PUBLISHED} | {e[key] for e in entries.values() for key in ("vectors", "records")}
    for path in folder.iterdir():
        if path.name not in named:
            with contextlib.suppress(OSError):  # a reader that still reads it reads the new manifest instead
                path.unlink()
