"""A local Chroma index whose vectors are also held in process: reads from numpy, writes behind, a snapshot on disk.

:class:`MirroredStore` answers reads from an in-memory copy of each collection (the index is this process's
alone, ``chroma.IndexLock``), queues writes to Chroma on a writer thread that waits for the game to be idle, and
leaves a snapshot of the copy at a clean exit so the next start reads the vectors without importing Chroma. Why
each of these, with their figures: ``docs/memory.md`` ("The local index in memory"); what switching each off
costs: ``bench/ablation.py``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from game.files import replace_durably, write_synced
from game.memory.vectors.chroma import (
    SNAPSHOT_MARKER,
    ChromaVectorStore,
    IndexLock,
    lock_index,
    open_locked,
    snapshot_dir,
)
from game.memory.vectors.embed_cache import CachedEmbedder
from game.memory.vectors.embedders import Embedder
from game.memory.vectors.foreground import FOREGROUND, MAX_WAIT_S
from game.memory.vectors.inprocess import CollectionCopy, InProcessVectorStore
from game.memory.vectors.stores import StoreUnavailable, recorded_space

log = logging.getLogger("storyecho.memory")

LOAD_BATCH = 5000
SNAPSHOT_VERSION = 1
IDLE_S = 0.5
"""The writer opens Chroma once no store call came for this long after a query (the game waits for the player)."""
MAX_DELAY_S = 5.0
"""... or this long after the first queued write, whatever the game does (back-to-back turns)."""
POLL_S = 0.05
WRITE_WAIT_S = MAX_WAIT_S
"""The longest a write waits for the turn (``foreground.py``). Only the first write of a backlog waits: with
turns back to back (never a quiet moment) one wait per write let the queue grow without bound."""
_STOP = object()


def index_fingerprint(index_dir: Path) -> list[list[Any]] | None:
    """Every file of the index folder with its size and modification time (None when the folder is missing).

    A snapshot is valid only for the index it was taken of: one deleted, truncated, replaced or written
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


class MirroredStore(InProcessVectorStore):
    """A local Chroma store (locked to this process) with an in-memory copy that answers reads; writes go behind.

    Writes change the copy at once (after the same embedding-space check Chroma's
    collection metadata makes, ``stores.SpaceMismatch``) and are queued to Chroma
    in order on a writer thread; :meth:`flush` and :meth:`close` wait for them.
    Each collection is read into the copy on first use: from the snapshot when
    its marker is valid, else from Chroma. See the module docstring.

    Build one with :meth:`open_local` (lazy: Chroma opens when needed), or
    around an open ``ChromaVectorStore`` (no snapshot).
    """

    def __init__(
        self,
        inner: ChromaVectorStore | None = None,
        *,
        index_dir: Path | None = None,
        lock: IndexLock | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        assert inner is not None or (index_dir is not None and lock is not None), "a store, or an index and its lock"
        super().__init__()
        self.backend = inner.backend if inner is not None else "chroma"
        self.index_dir = index_dir
        self.lock = lock if lock is not None else (inner.lock if inner is not None else None)
        """The cross-process lock of the local index, held until :meth:`close`."""
        self.rebuilt_from = ""
        """Why the local index was found damaged and rebuilt when it opened ("" when it opened fine)."""
        self._chroma: ChromaVectorStore | None = inner
        self._say = say
        self._dirty: set[str] = set()
        """Collections whose copy may differ from their snapshot files."""
        self._snapshot: dict[str, dict[str, Any]] | None = None
        """The valid marker's collections (their files), or None."""
        self._open_lock = threading.Lock()
        self._open_error: str | None = None
        self._failed = False
        """A write (or the open) failed: Chroma may lack what the copy holds, so no snapshot is written."""
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._go = threading.Event()
        if inner is not None:
            self._go.set()  # Chroma is open already: nothing to keep off the turn's path
        self._queried = False
        self._last_call = time.monotonic()
        self._first_write: float | None = None
        self._closed = False
        self._stopped = False
        """The writer has stopped (at :meth:`close`): a write now is refused (``StoreUnavailable``)."""
        self._caches: list[CachedEmbedder] = []

    @classmethod
    def open_local(cls, index_dir: Path, say: Callable[[str], None] | None = None) -> MirroredStore:
        """The local index under ``index_dir``, locked now; Chroma is opened now only without a valid snapshot.

        Raises:
            IndexBusy: another process holds the index.
            StoreUnavailable: the index cannot be locked, or (without a snapshot) opened.
        """
        lock = lock_index(index_dir)
        store = cls(index_dir=index_dir, lock=lock, say=say)
        try:
            store._snapshot = store._read_marker()
            if store._snapshot is None:
                store.chroma()
        except BaseException:
            lock.release()
            raise
        return store

    def remember_embeddings(self, embedder: Embedder) -> Embedder:
        """``embedder`` with its vectors remembered by text beside the index, saved at :meth:`close`
        (``embed_cache.py``: a new game's seeded Story Bible is not embedded again)."""
        if self.index_dir is None:
            return embedder
        cache = CachedEmbedder(embedder, self.index_dir.with_name(self.index_dir.name + ".embeddings"))
        self._caches.append(cache)
        return cache

    # ------------------------------------------------------------ Chroma
    def chroma(self) -> ChromaVectorStore:
        """The Chroma store, opened now if it is not yet (which invalidates the snapshot first).

        Raises:
            StoreUnavailable: Chroma cannot be imported or opened.
        """
        rebuilt = ""
        with self._open_lock:
            if self._chroma is None:
                if self._open_error is not None:
                    raise StoreUnavailable(self._open_error)
                assert self.index_dir is not None and self.lock is not None
                try:
                    opened = open_locked(self.index_dir, self.lock)
                except StoreUnavailable as exc:
                    self._open_error = str(exc)
                    self._failed = True
                    raise
                opened.lock = None  # the lock is this store's, released at close
                self._chroma = opened
                self.rebuilt_from = rebuilt = opened.rebuilt_from
                self._go.set()
            store = self._chroma
        if rebuilt:
            self._rebuilt(rebuilt)
        return store

    def _rebuilt(self, why: str) -> None:
        """The index was damaged and is empty now: tell the player, and refill it from the copy."""
        message = f"the memory index was damaged ({why}); it is being rebuilt from your saves"
        try:
            if self._say is None:
                raise RuntimeError("no one to tell")
            self._say(message)
        except Exception:  # noqa: BLE001 - a notice must never stop the game
            log.warning("%s", message)
        with self._lock:
            self._snapshot = None  # what it held beyond the copy went with the damaged index
            self._dirty |= set(self._collections)
            if any(col.rows for col in self._collections.values()):
                self._enqueue(("refill",))

    def _read_marker(self) -> dict[str, dict[str, Any]] | None:
        """The collections of a valid snapshot, or None (no marker, or one that does not fit the index)."""
        assert self.index_dir is not None
        path = snapshot_dir(self.index_dir) / SNAPSHOT_MARKER
        try:
            marker = orjson.loads(path.read_bytes())
            if marker.get("version") != SNAPSHOT_VERSION:
                raise ValueError(f"version {marker.get('version')!r}, not {SNAPSHOT_VERSION}")
            if marker.get("index") != index_fingerprint(self.index_dir):
                raise ValueError("the index changed since it was taken")
            return {str(name): dict(entry) for name, entry in marker["collections"].items()}
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - an unusable snapshot means reading Chroma, never a crash
            log.warning("the memory index snapshot %s is not usable (%s); reading the index instead", path, exc)
            return None

    # --------------------------------------------------------------- the copy
    def _get(self, collection: str) -> CollectionCopy:
        """The collection's copy, read on first use from the snapshot or else from Chroma."""
        with self._lock:
            self._last_call = time.monotonic()
            found = self._collections.get(collection)
            if found is None:
                if self._snapshot is not None and collection in self._snapshot:
                    found = self._from_snapshot(collection, self._snapshot[collection])
                if found is None:
                    found = self._from_chroma(collection)
                self._collections[collection] = found
            return found

    def _from_snapshot(self, collection: str, entry: dict[str, Any]) -> CollectionCopy | None:
        assert self.index_dir is not None
        folder = snapshot_dir(self.index_dir)
        try:
            vectors = (folder / entry["vectors"]).read_bytes()
            records = (folder / entry["records"]).read_bytes()
            if zlib.crc32(vectors) != entry["vectors_crc"] or zlib.crc32(records) != entry["records_crc"]:
                raise ValueError("its checksum does not match")
            saved = orjson.loads(records)
            ids, metadatas, count = list(saved["ids"]), list(saved["metadatas"]), int(entry["count"])
            matrix = np.frombuffer(vectors, dtype=np.float32)
            if saved["collection"] != collection or len(ids) != count or len(metadatas) != count:
                raise ValueError("its files disagree")
            matrix = matrix.reshape(count, int(entry["dimension"]))
            meta = saved["meta"]
        except Exception as exc:  # noqa: BLE001 - read Chroma instead
            log.warning("the snapshot of %s cannot be read (%s); reading the index instead", collection, exc)
            return None
        found = CollectionCopy()
        if count:
            found.upsert(ids, matrix, [dict(m) for m in metadatas])
        self._meta[collection] = dict(meta) if meta is not None else None
        return found

    def _from_chroma(self, collection: str) -> CollectionCopy:
        found = CollectionCopy()
        self._dirty.add(collection)
        try:
            col = self.chroma()._collection(collection)
        except StoreUnavailable as exc:
            log.warning("the memory index cannot be opened (%s); %s is kept in memory only", exc, collection)
            self._meta[collection] = None
            return found
        offset = 0
        while col is not None:
            got = col.get(include=["embeddings", "metadatas"], limit=LOAD_BATCH, offset=offset)
            if not len(got["ids"]):
                break
            vectors = np.asarray(got["embeddings"], dtype=np.float32)
            found.upsert(list(got["ids"]), vectors, [dict(m or {}) for m in got["metadatas"]])
            offset += len(got["ids"])
        self._meta[collection] = dict(col.metadata or {}) if col is not None else None
        return found

    def _checked(self, collection: str, *, write: bool) -> None:
        self._queried = self._queried or not write

    def _written(self, op: tuple[Any, ...]) -> None:
        self._enqueue(op)  # first: it refuses once closed
        self._dirty.add(op[1])

    # ----------------------------------------------------------- writes
    def _enqueue(self, op: tuple[Any, ...]) -> None:
        with self._lock:
            if self._stopped:
                raise StoreUnavailable("the memory index is closed")
            self._last_call = time.monotonic()
            if self._first_write is None:
                self._first_write = self._last_call
            self._queue.put(op)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="chroma-writer", daemon=True)
                self._writer.start()

    def _write_loop(self) -> None:
        backlog = False
        while True:
            op = self._queue.get()
            try:
                if op is _STOP:
                    return
                self._wait_for_idle()
                if not backlog:  # a turn under way goes first; what queued behind meanwhile goes at once
                    FOREGROUND.wait_idle(WRITE_WAIT_S)
                self._apply(op)
                backlog = not self._queue.empty()
            except Exception as exc:  # noqa: BLE001 - the copy holds it; the next start embeds it again
                if not self._failed:
                    log.warning(
                        "writing to the memory index failed (%s); what it lacks is embedded again at the next start",
                        exc,
                    )
                self._failed = True
            finally:
                self._queue.task_done()

    def _wait_for_idle(self) -> None:
        """Hold the first write (so the Chroma import) until the game is idle, or :meth:`flush` asks."""
        while not self._go.is_set():
            now = time.monotonic()
            if self._queried and now - self._last_call >= IDLE_S:
                break
            if self._first_write is not None and now - self._first_write >= MAX_DELAY_S:
                break
            self._go.wait(POLL_S)
        self._go.set()

    def _apply(self, op: tuple[Any, ...]) -> None:
        chroma = self.chroma()
        if op[0] == "upsert":
            _, collection, ids, matrix, metadatas, space = op
            chroma.upsert(collection, ids, matrix, metadatas, space=space)
        elif op[0] == "delete":
            chroma.delete(op[1], op[2])
        elif op[0] == "drop":
            chroma.drop(op[1])
        else:  # refill a rebuilt index with the whole copy (later queued writes land after it)
            for collection in list(self._collections):
                with self._lock:
                    ids, matrix, metadatas = self._collections[collection].export()
                    meta = self._meta.get(collection)
                space, _ = recorded_space(meta)
                for start in range(0, len(ids) if meta is not None else 0, 1000):
                    end = start + 1000
                    chroma.upsert(collection, ids[start:end], matrix[start:end], metadatas[start:end], space=space)

    def collections(self) -> dict[str, Any]:
        """Chroma's collections (see ``ChromaVectorStore.collections``): opens Chroma, after the queued writes."""
        self.flush()
        return self.chroma().collections()

    # ------------------------------------------------------- flush, close
    def flush(self) -> None:
        """Wait until every queued write has reached Chroma (opening it now if it is not yet)."""
        if self._writer is not None and not self._stopped:
            self._go.set()
            with FOREGROUND.waiting():  # asked for in a turn, the writer must not wait for that turn
                self._queue.join()

    def close(self) -> None:
        """Write everything to Chroma, then the snapshot and its clean marker, and release the index."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
            with self._lock:
                self._stopped = True
            if self._writer is not None:
                self._queue.put(_STOP)
                self._writer.join()
            if self.index_dir is not None and not self._failed:
                try:
                    self._write_snapshot()
                except Exception as exc:  # noqa: BLE001 - without a marker the next start reads Chroma
                    log.warning(
                        "the memory index snapshot could not be written (%s); the next start reads the index", exc
                    )
        finally:
            for cache in self._caches:
                try:
                    cache.save()
                except Exception as exc:  # noqa: BLE001 - the next game embeds those texts again
                    log.warning("the embedding cache %s could not be written (%s)", cache.path, exc)
            if self._chroma is not None:
                self._chroma.close()
            if self.lock is not None:
                self.lock.release()

    def _write_snapshot(self) -> None:
        """Write the copy of each collection changed or read from Chroma, then the marker naming every file.

        Called once every write has reached Chroma. When Chroma was never opened, nothing changed and the
        marker found at start still holds.
        """
        assert self.index_dir is not None
        if self._chroma is None:
            return
        folder = snapshot_dir(self.index_dir)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = f"{os.getpid()}-{time.time_ns()}"
        entries: dict[str, dict[str, Any]] = {}
        with self._lock:
            previous = self._snapshot or {}  # None after a rebuild: the old files describe a lost index
            for name, entry in previous.items():  # collections never changed (or never read) still match
                if name not in self._dirty:
                    entries[name] = entry
            for number, name in enumerate(sorted(self._dirty & set(self._collections))):
                ids, matrix, metadatas = self._collections[name].export()
                vectors = np.ascontiguousarray(matrix, dtype=np.float32).tobytes()
                records = orjson.dumps(
                    {"collection": name, "ids": ids, "metadatas": metadatas, "meta": self._meta.get(name)}
                )
                base = f"{stamp}-{number}"
                write_synced(folder / f"{base}.f32", vectors)
                write_synced(folder / f"{base}.json", records)
                entries[name] = {
                    "vectors": f"{base}.f32",
                    "records": f"{base}.json",
                    "vectors_crc": zlib.crc32(vectors),
                    "records_crc": zlib.crc32(records),
                    "count": len(ids),
                    "dimension": int(matrix.shape[1]) if matrix.ndim == 2 else 0,
                }
        marker = {"version": SNAPSHOT_VERSION, "index": index_fingerprint(self.index_dir), "collections": entries}
        replace_durably(folder / SNAPSHOT_MARKER, orjson.dumps(marker))
        named = {SNAPSHOT_MARKER} | {e[key] for e in entries.values() for key in ("vectors", "records")}
        for path in folder.iterdir():
            if path.name not in named:
                with contextlib.suppress(OSError):
                    path.unlink()
