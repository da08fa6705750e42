"""A local Chroma index whose vectors are also held in process: reads from numpy, writes behind, a snapshot on disk.

:class:`MirroredStore` answers reads from an in-memory copy of each collection (the index is this process's
alone, ``chroma.IndexLock``), queues writes to Chroma on a writer thread that waits for the game to be idle, and
leaves a snapshot of the copy at a clean exit so the next start reads the vectors without importing Chroma. Why
each of these, with their figures: ``docs/memory.md`` ("The local index in memory"); what switching each off
costs: ``bench/ablation.py``.

One writer, readers that never wait for it (issue 33): a second process on the same data folder finds the index
held and opens a reader (:meth:`MirroredStore.open_reader`): its copy comes from the latest snapshot (the holder
publishes one while its game is idle, ``snapshot.py``), so a loaded game embeds only what that lacks, and its own
writes stay in its copy. When the holder has gone (a flush or the reader's close finds the lock free) the reader
takes the index and writes them; else they are left out, as vectors may be: the saves hold every text, embedded
again (or found in the embedding cache, ``embed_cache.py``) when needed. ``bench/two_windows.py`` measures it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from game.memory.vectors.chroma import ChromaVectorStore, IndexLock, lock_index, open_locked
from game.memory.vectors.embed_cache import CachedEmbedder
from game.memory.vectors.embedders import Embedder
from game.memory.vectors.foreground import FOREGROUND, MAX_WAIT_S
from game.memory.vectors.inprocess import CollectionCopy, InProcessVectorStore
from game.memory.vectors.snapshot import (
    CollectionFiles,
    Entries,
    read_collection,
    read_manifest,
    write_collections,
    write_manifest,
)
from game.memory.vectors.stores import StoreUnavailable, recorded_space

log = logging.getLogger("storyecho.memory")

LOAD_BATCH = 5000
READER = "chroma-reader"
"""The backend of a reader (``hybrid:chroma-reader`` in ``retrieval_meta``): another process holds the index."""
IDLE_S = 0.5
"""The writer opens Chroma once no store call came for this long after a query (the game waits for the player)."""
MAX_DELAY_S = 5.0
"""... or this long after the first queued write, whatever the game does (back-to-back turns)."""
POLL_S = 0.05
WRITE_WAIT_S = MAX_WAIT_S
"""The longest a write waits for the turn (``foreground.py``). Only the first write of a backlog waits: with
turns back to back (never a quiet moment) one wait per write let the queue grow without bound."""
PUBLISH_EVERY_S = 30.0
"""The holder publishes its copy for readers (``snapshot.py``) at most this often, ..."""
PUBLISH_IDLE_S = 2.0
"""... once no store call came for this long and its writes have reached Chroma (the player reads the turn)."""
PUBLISH_POLL_S = 1.0
"""How often the writer looks whether a publish is due, while one may be (never when nothing changed)."""
_STOP = object()


class MirroredStore(InProcessVectorStore):
    """A local Chroma store (locked to this process) with an in-memory copy that answers reads; writes go behind.

    Writes change the copy at once (after the same embedding-space check Chroma's
    collection metadata makes, ``stores.SpaceMismatch``) and are queued to Chroma
    in order on a writer thread; :meth:`flush` and :meth:`close` wait for them.
    Each collection is read into the copy on first use: from the snapshot when
    its marker is valid, else from Chroma. See the module docstring.

    Build one with :meth:`open_local` (lazy: Chroma opens when needed), :meth:`open_reader` (another process
    holds the index), or around an open ``ChromaVectorStore`` (no snapshot).
    """

    def __init__(
        self,
        inner: ChromaVectorStore | None = None,
        *,
        index_dir: Path | None = None,
        lock: IndexLock | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        assert inner is not None or index_dir is not None, "a store, or an index (and its lock, unless a reader)"
        super().__init__()
        self.backend = inner.backend if inner is not None else "chroma" if lock is not None else READER
        self.index_dir = index_dir
        self.lock = lock if lock is not None else (inner.lock if inner is not None else None)
        """The cross-process lock of the local index, held until :meth:`close` (None: a reader)."""
        self.rebuilt_from = ""
        """Why the local index was found damaged and rebuilt when it opened ("" when it opened fine)."""
        self._chroma: ChromaVectorStore | None = inner
        self._say = say
        self._reader = inner is None and lock is None
        """Another process holds the index: writes are :attr:`_held` until this one can take it."""
        self._held: list[tuple[Any, ...]] = []
        self._partial = False
        """A reader that took the index: its copy may lack what the holder wrote after the snapshot it read,
        so it never writes a snapshot."""
        self._dirty: set[str] = set()
        """Collections whose copy may differ from their snapshot files."""
        self._snapshot: Entries | None = None
        """The collections of the manifest read at open or written since (their files), or None."""
        self._rebuilds = 0
        self._published_at = 0.0
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
            store._snapshot = read_manifest(index_dir)
            if store._snapshot is None:
                store.chroma()
        except BaseException:
            lock.release()
            raise
        return store

    @classmethod
    def open_reader(cls, index_dir: Path, say: Callable[[str], None] | None = None) -> MirroredStore:
        """The local index another process holds, read from its latest snapshot without waiting for it.

        Neither Chroma nor the lock is touched: each collection is read on first use from the snapshot's files
        (empty when it has none), writes stay in the copy (see the module docstring).
        """
        store = cls(index_dir=index_dir, say=say)
        store._snapshot = read_manifest(index_dir, reader=True)
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
            StoreUnavailable: Chroma cannot be imported or opened, or another process holds it (a reader).
        """
        rebuilt = ""
        with self._open_lock:
            if self._chroma is None:
                if self._open_error is not None:
                    raise StoreUnavailable(self._open_error)
                if self.lock is None:
                    raise StoreUnavailable("another StoryEcho holds the memory index")
                assert self.index_dir is not None
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
            self._rebuilds += 1
            self._snapshot = None  # what it held beyond the copy went with the damaged index
            self._dirty |= set(self._collections)
            if any(col.rows for col in self._collections.values()):
                self._enqueue(("refill",))

    def _take_over(self) -> bool:
        """A reader takes the index once its holder has gone, and queues what it held; whether it holds it."""
        with self._lock:
            if not self._reader:
                return True
            if self._stopped:
                return False
            assert self.index_dir is not None
            try:
                self.lock = lock_index(self.index_dir)
            except StoreUnavailable:  # IndexBusy: the holder is still there
                return False
            self._reader, self._partial, self.backend = False, True, "chroma"
            held, self._held = self._held, []
            for op in held:
                self._enqueue(op)
            log.info("the memory index is free again: this game holds it now (%d writes queued)", len(held))
            return True

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
        for _ in range(3):
            try:
                files = read_collection(self.index_dir, collection, entry)
                break
            except Exception as exc:  # noqa: BLE001 - read elsewhere
                fresh = read_manifest(self.index_dir, reader=True) if self._reader else None
                if fresh is None or fresh.get(collection, entry) == entry:  # the holder published nothing since
                    log.warning("the snapshot of %s cannot be read (%s); reading the index instead", collection, exc)
                    return None
                self._snapshot, entry = fresh, fresh[collection]
        else:
            return None
        found = CollectionCopy()
        if files.ids:
            found.upsert(files.ids, files.matrix, files.metadatas)
        self._meta[collection] = files.meta
        return found

    def _from_chroma(self, collection: str) -> CollectionCopy:
        found = CollectionCopy()
        self._dirty.add(collection)
        if self._reader:  # nothing to read without the index: what a game needs that is missing, it embeds
            self._meta[collection] = None
            return found
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
        if self._reader:  # called under the lock, as _take_over flips it
            if self._stopped:
                raise StoreUnavailable("the memory index is closed")
            self._held.append(op)
        else:
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
            try:
                op = self._queue.get(timeout=PUBLISH_POLL_S if self._may_publish() else None)
            except queue.Empty:
                self._publish_if_idle()
                continue
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

    # ------------------------------------------------------------ publish
    def _may_publish(self) -> bool:
        """Whether a snapshot for readers may come due: Chroma is open (so the clean one is gone) and the copy
        changed since the last one."""
        ready = self._chroma is not None and self.index_dir is not None
        return ready and bool(self._dirty) and not (self._failed or self._partial)

    def _publish_if_idle(self) -> None:
        """Publish the copy for readers (the writer thread, its queue empty) when the game is idle and the last
        publish is :data:`PUBLISH_EVERY_S` old."""
        now = time.monotonic()
        if now - self._published_at < PUBLISH_EVERY_S or now - self._last_call < PUBLISH_IDLE_S:
            return
        if FOREGROUND.busy_now or not self._may_publish():
            return
        self._published_at = now
        try:
            self._write_snapshot(clean=False)
        except Exception as exc:  # noqa: BLE001 - readers read an older snapshot
            log.warning("the memory index snapshot could not be published (%s: %s)", type(exc).__name__, exc)

    # ------------------------------------------------------- flush, close
    def flush(self) -> None:
        """Wait until every queued write has reached Chroma (opening it now if it is not yet).

        A reader first takes the index if its holder has gone; while it is held, there is nothing to wait for.
        """
        if self._reader and not self._take_over():
            return
        if self._writer is not None and not self._stopped:
            self._go.set()
            with FOREGROUND.waiting():  # asked for in a turn, the writer must not wait for that turn
                self._queue.join()

    def close(self) -> None:
        """Write everything to Chroma, then the snapshot and its clean marker, and release the index.

        A reader whose index is still held leaves its writes out (see the module docstring).
        """
        if self._closed:
            return
        self._closed = True
        try:
            if self._reader and not self._take_over():
                with self._lock:
                    self._stopped = True
                    left = sum(len(op[2]) for op in self._held if op[0] == "upsert")
                    self._held = []
                if left:
                    log.info("%d vectors of this game left out of the memory index: another StoryEcho holds it", left)
                return
            self.flush()
            with self._lock:
                self._stopped = True
            if self._writer is not None:
                self._queue.put(_STOP)
                self._writer.join()
            if self.index_dir is not None and not (self._failed or self._partial):
                try:
                    self._write_snapshot(clean=True)
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

    def _write_snapshot(self, *, clean: bool) -> None:
        """Write the copy of each collection changed or read from Chroma since the last snapshot, then the
        manifest naming every file (``snapshot.py``): ``clean`` at the close, once every write has reached
        Chroma; else published for readers, from the writer thread.

        When Chroma was never opened, nothing changed and the marker found at start still holds.
        """
        assert self.index_dir is not None
        if self._chroma is None:
            return
        with self._lock:
            rebuilds = self._rebuilds
            previous = self._snapshot or {}  # None after a rebuild: the old files describe a lost index
            entries = {name: entry for name, entry in previous.items() if name not in self._dirty}
            changed = self._dirty & set(self._collections)
            files = {}
            for name in changed:
                ids, matrix, metadatas = self._collections[name].export()
                files[name] = CollectionFiles(ids, matrix, metadatas, self._meta.get(name))
            self._dirty -= changed  # a write from now on marks its collection again
        try:
            entries |= write_collections(self.index_dir, files)
            write_manifest(self.index_dir, entries, clean=clean)
        except BaseException:
            with self._lock:
                self._dirty |= changed
            raise
        with self._lock:
            if self._rebuilds == rebuilds:
                self._snapshot = entries
            else:  # the index was found damaged meanwhile: these files describe the lost one
                self._dirty |= changed
