"""The Chroma vector store (a local ``PersistentClient`` under ``saves/.index``, or a server over HTTP).

Chroma is the durable store the mission names: it keeps every vector between
runs so a loaded game embeds nothing again. A local index belongs to one
process at a time (:class:`IndexLock`; a second process reads its snapshot
instead and never waits: ``mirror.MirroredStore.open_reader``); a damaged one
is moved aside and rebuilt from the saves at open. What every store shares (the protocol, spaces,
filters) is in ``stores.py``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from game.files import sync_folder
from game.memory.vectors.embedders import EmbeddingSpace, Vectors
from game.memory.vectors.metadata_table import Where
from game.memory.vectors.stores import (
    COLLECTION_PREFIX,
    LEGACY_COLLECTIONS,
    DenseAnswer,
    StoreUnavailable,
    VectorHit,
    check_space,
    recorded_space,
    space_metadata,
)

log = logging.getLogger("storyecho.memory")
CHROMA_TOKEN_ENV = "STORYECHO_CHROMA_TOKEN"
"""The environment variable holding a Chroma server's token (``--chroma-token`` sets it): never on a command line
or in a settings file, which others may read."""
UPSERT_BATCH = 1000
"""Vectors per Chroma upsert: Chroma refuses a batch over its maximum (5,461 here), which a rebuilt index of
the largest save (30,000 Story Bible entries) passed in one write, so its vectors were never kept."""


def _chroma_where(where: Where | None) -> Where | None:
    if not where or "$and" in where:
        return where
    if len(where) == 1:
        return where
    return {"$and": [{k: v} for k, v in where.items()]}


class ChromaVectorStore:
    """Chroma collections in inner-product space; vectors are always passed in.

    Inner product rather than cosine because an item with context is stored as
    the mean of two unit vectors (see ``hybrid.py``): its score must be the
    mean of the two cosines, which normalising would change. For unit vectors
    the two spaces rank alike.

    Args:
        client: a ready Chroma client (``PersistentClient``, ``HttpClient`` or
            ``EphemeralClient``), so tests can hand in their own.
    """

    def __init__(self, client: Any, backend: str = "chroma") -> None:
        self.client = client
        self.backend = backend
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.lock: IndexLock | None = None
        """The cross-process lock of a local index (None for a server or a client handed in)."""
        self.rebuilt_from = ""
        """Why the local index was found damaged and rebuilt at open ("" when it opened fine)."""

    def flush(self) -> None:
        """Nothing to wait for: every write lands before it returns."""

    def close(self) -> None:
        """Release the local index for other processes."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _collection(self, name: str, create: tuple[EmbeddingSpace | None, int] | None = None) -> Any:
        """The collection ``name``; None when it does not exist, unless ``create`` gives its (space, dimension).

        Only a write creates a collection, recording the space and dimension of
        its vectors in the collection's metadata.
        """
        with self._lock:
            if name not in self._collections:
                if create is None:
                    from chromadb.errors import NotFoundError

                    try:
                        found = self.client.get_collection(COLLECTION_PREFIX + name, embedding_function=None)
                    except NotFoundError:
                        return None
                else:
                    found = self.client.get_or_create_collection(  # another process may create it meanwhile
                        COLLECTION_PREFIX + name,
                        metadata={"hnsw:space": "ip"} | space_metadata(*create),
                        embedding_function=None,
                    )
                self._collections[name] = found
            return self._collections[name]

    def _checked(self, name: str, space: EmbeddingSpace | None, dimension: int, *, create: bool) -> Any:
        col = self._collection(name, (space, dimension) if create else None)
        if col is not None:
            check_space(name, *recorded_space(col.metadata), space, dimension)
        return col

    def upsert(
        self,
        collection: str,
        ids: list[str],
        vectors: Vectors,
        metadatas: list[dict[str, Any]],
        space: EmbeddingSpace | None = None,
    ) -> None:
        if ids:
            matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
            col = self._checked(collection, space, matrix.shape[1], create=True)
            for start in range(0, len(ids), UPSERT_BATCH):  # Chroma refuses a batch over its max (5,461 here)
                end = start + UPSERT_BATCH
                col.upsert(ids=ids[start:end], embeddings=matrix[start:end].tolist(), metadatas=metadatas[start:end])

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]:
        col = self._checked(collection, space, int(np.asarray(vector).size), create=False)
        if col is None:
            return []
        result = col.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).reshape(-1).tolist()],
            n_results=k,
            where=_chroma_where(where),
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0] if result.get("distances") else [1.0] * len(ids)
        return [VectorHit(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def query_arrays(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> DenseAnswer:
        return DenseAnswer.of(self.query(collection, vector, k, where, space))

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        col = self._collection(collection)
        if col is None:
            return {}
        result = col.get(where=_chroma_where(where), include=["metadatas"])
        return {i: dict(m or {}) for i, m in zip(result["ids"], result["metadatas"], strict=True)}

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        col = self._collection(collection)
        found: set[str] = set()
        for start in range(0, len(ids) if col is not None else 0, 1000):  # keep each request small
            result = col.get(ids=ids[start : start + 1000], include=[])
            found.update(result["ids"])
        return found

    def delete(self, collection: str, ids: list[str]) -> None:
        col = self._collection(collection)
        if ids and col is not None:
            col.delete(ids=ids)

    def count(self, collection: str) -> int:
        col = self._collection(collection)
        return int(col.count()) if col is not None else 0

    def collections(self) -> dict[str, dict[str, Any]]:
        """StoryEcho's collections (without :data:`COLLECTION_PREFIX`): recorded model, dimension, vector count."""
        out: dict[str, dict[str, Any]] = {}
        for col in self.client.list_collections():
            if col.name.startswith(COLLECTION_PREFIX):
                meta = {k: v for k, v in (col.metadata or {}).items() if k.startswith("storyecho_")}
                out[col.name.removeprefix(COLLECTION_PREFIX)] = meta | {"count": int(col.count())}
        return out

    def drop(self, collection: str) -> None:
        """Delete a whole collection."""
        from chromadb.errors import NotFoundError

        with self._lock:
            self._collections.pop(collection, None)
            with contextlib.suppress(NotFoundError):
                self.client.delete_collection(COLLECTION_PREFIX + collection)


def chroma_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_chroma(index_dir: Path | None = None, url: str | None = None) -> ChromaVectorStore:
    """A Chroma store under ``index_dir`` or at ``url`` (``http://host:port``, or ``https://``: TLS, port 443
    unless given), with the token in :data:`CHROMA_TOKEN_ENV` as a bearer header when there is one (Chroma's
    token authentication reads it; a proxy in front may too).

    A local index belongs to one process at a time: Chroma's
    ``PersistentClient`` is not safe across processes, so the folder is locked
    (``.lock``, an advisory ``flock`` the OS releases when the process dies)
    and a second game on the same data folder gets :class:`IndexBusy` (the
    game then reads the snapshot: ``mirror.MirroredStore.open_reader``). An
    index that cannot be opened (deleted files, a truncated or garbage
    database) is moved aside to ``<index>.broken-<time>`` and a fresh one is
    created: the index is rebuilt from the content packs and the saves, which
    hold all the text. Opening a local index invalidates its clean snapshot
    (``snapshot.py``): whoever opens it may write.

    Raises:
        IndexBusy: another process holds the local index.
        StoreUnavailable: when Chroma cannot be imported, opened or reached.
    """
    if url:
        try:
            import chromadb
        except Exception as exc:
            raise StoreUnavailable(f"Chroma unavailable: {exc}") from exc
        from urllib.parse import urlparse

        parsed = urlparse(url)
        secure = parsed.scheme == "https"
        token = os.environ.get(CHROMA_TOKEN_ENV, "")
        try:
            client = chromadb.HttpClient(
                host=parsed.hostname or "127.0.0.1",
                port=parsed.port or (443 if secure else 8000),
                ssl=secure,
                headers={"Authorization": f"Bearer {token}"} if token else None,
                settings=chroma_settings(),
            )
            client.heartbeat()
        except Exception as exc:
            raise StoreUnavailable(f"Chroma unavailable: {exc}") from exc
        return ChromaVectorStore(client, backend="chroma-http")
    assert index_dir is not None, "index_dir or url is required"
    lock = lock_index(index_dir)
    try:
        return open_locked(index_dir, lock)
    except BaseException:
        lock.release()
        raise


def lock_index(index_dir: Path) -> IndexLock:
    """Create the local index folder and take its cross-process lock (cheap: no Chroma import).

    Raises:
        IndexBusy: another process holds the local index.
        StoreUnavailable: the folder cannot be created.
    """
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"Chroma unavailable: cannot create {index_dir}: {exc}") from exc
    try:
        return IndexLock.acquire(index_dir.with_name(index_dir.name + ".lock"))
    except IndexBusy:
        raise
    except OSError as exc:
        raise StoreUnavailable(f"Chroma unavailable: cannot lock {index_dir}: {exc}") from exc


def open_locked(index_dir: Path, lock: IndexLock) -> ChromaVectorStore:
    """Open the local index whose ``lock`` this process holds (the lock stays held whatever happens).

    The snapshot beside the index is invalidated first (:func:`invalidate_snapshot`), then Chroma is
    imported and opened; a damaged index is moved aside and a fresh one created (see :func:`open_chroma`).

    Raises:
        StoreUnavailable: Chroma cannot be imported or opened.
    """
    try:
        invalidate_snapshot(index_dir)
        import chromadb
    except Exception as exc:
        raise StoreUnavailable(f"Chroma unavailable: {exc}") from exc
    try:
        try:
            return _open_persistent(chromadb, index_dir, lock)
        except Exception as exc:  # noqa: BLE001 - any failure to open means a damaged index
            broken = index_dir.with_name(f"{index_dir.name}.broken-{int(time.time())}")
            log.warning(
                "the memory index %s cannot be opened (%s); moving it to %s and rebuilding", index_dir, exc, broken
            )
            _forget_client(index_dir)
            os.replace(index_dir, broken)
            index_dir.mkdir(parents=True)
            return _open_persistent(chromadb, index_dir, lock, rebuilt_from=str(exc))
    except Exception as exc:
        raise StoreUnavailable(f"Chroma unavailable: {exc}") from exc


SNAPSHOT_MARKER = "clean"
"""The manifest in :func:`snapshot_dir` that says the snapshot there is what the index holds (``snapshot.py``)."""
PUBLISHED = "published"
"""The manifest of the latest snapshot, whatever the index holds since: what a second process reads."""


def snapshot_dir(index_dir: Path) -> Path:
    """Where the in-memory copy of a local index is snapshot (``<data>/.index.mirror``)."""
    return index_dir.with_name(index_dir.name + ".mirror")


def invalidate_snapshot(index_dir: Path) -> None:
    """Take the snapshot's clean marker away (durably) before the local index may be written.

    It becomes the :data:`PUBLISHED` manifest: its files stay, for a second process to read (``snapshot.py``).

    Raises:
        OSError: the marker exists and cannot be renamed.
    """
    folder = snapshot_dir(index_dir)
    try:
        os.replace(folder / SNAPSHOT_MARKER, folder / PUBLISHED)
    except FileNotFoundError:
        return
    sync_folder(folder)


def _open_persistent(chromadb: Any, index_dir: Path, lock: IndexLock, rebuilt_from: str = "") -> ChromaVectorStore:
    store = ChromaVectorStore(chromadb.PersistentClient(path=str(index_dir), settings=chroma_settings()))
    for col in store.client.list_collections():  # touch the database now, so damage shows here and not mid-game
        if col.name in LEGACY_COLLECTIONS:  # vectors of an unrecorded model: never to be compared, so dropped
            log.info("dropping %s, a collection that does not record its embedding model", col.name)
            store.client.delete_collection(col.name)
        else:
            col.count()
    store.lock = lock
    store.rebuilt_from = rebuilt_from
    return store


def _forget_client(index_dir: Path) -> None:
    """Drop Chroma's per-process cache of the client for ``index_dir`` (it caches systems by path)."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
    except Exception:  # noqa: BLE001 - an older Chroma without the cache
        log.debug("no Chroma client cache to clear for %s", index_dir)


class IndexBusy(StoreUnavailable):
    """Another process holds the local vector index."""


class IndexLock:
    """An exclusive advisory lock on a file, held for the life of a process's index."""

    def __init__(self, path: Path, handle: Any) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def acquire(cls, path: Path) -> IndexLock:
        import fcntl

        handle = open(path, "a+")  # noqa: SIM115 - held open as long as the lock
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise IndexBusy(
                f"the memory index {path.with_suffix('')} is in use by another StoryEcho (process {holder})"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        return cls(path, handle)

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file releases the flock
            self._handle = None
