"""Vector stores: Chroma (persistent or over HTTP) and an in-process fallback.

Similarity is the inner product (vectors arrive unit-length, or as the mean of
two unit vectors). Vectors are an index, not the truth: every text they point at also lives in the
memory state (and so in the save), so a store can be dropped and rebuilt.
Filters use Chroma's ``where`` syntax restricted to what both backends support:
equality (``{"session": "abc"}``) and ``{"turn": {"$lte": 12}}``, combined with
AND.

The in-process store is brute-force numpy (a vectorised metadata mask, then
one matrix product over the allowed rows). FAISS (``faiss-cpu``) was measured
beside it with the same filter (``bench/vector_index.py``): FAISS answered a
filtered top-10 query 2.4-3x faster, but at game sizes both take under half a
millisecond (numpy 0.13 ms at 1,000 vectors, 0.46 ms at 5,000), an order of
magnitude less than embedding the query. numpy keeps the fallback free of an
extra native dependency and makes deletes and upserts trivial.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from game.memory.embedders import Vectors

log = logging.getLogger("storyecho.memory")

Where = dict[str, Any]
COLLECTION_PREFIX = "storyecho_"


@dataclass
class VectorHit:
    id: str
    similarity: float


class StoreUnavailable(RuntimeError):
    """The vector store cannot be started or reached."""


class VectorStore(Protocol):
    """What memory needs from a vector index."""

    backend: str

    def upsert(self, collection: str, ids: list[str], vectors: Vectors, metadatas: list[dict[str, Any]]) -> None: ...

    def query(self, collection: str, vector: Vectors, k: int, where: Where | None = None) -> list[VectorHit]: ...

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]: ...

    def delete(self, collection: str, ids: list[str]) -> None: ...

    def count(self, collection: str) -> int: ...


def matches_where(metadata: dict[str, Any], where: Where | None) -> bool:
    if not where:
        return True
    clauses = where["$and"] if "$and" in where else [{k: v} for k, v in where.items()]
    for clause in clauses:
        for key, expected in clause.items():
            value = metadata.get(key)
            if isinstance(expected, dict):
                if "$lte" in expected and not (value is not None and value <= expected["$lte"]):
                    return False
                if "$eq" in expected and value != expected["$eq"]:
                    return False
            elif value != expected:
                return False
    return True


def _chroma_where(where: Where | None) -> Where | None:
    if not where or "$and" in where:
        return where
    if len(where) == 1:
        return where
    return {"$and": [{k: v} for k, v in where.items()]}


class InProcessVectorStore:
    """Brute-force inner-product search over numpy arrays, one per collection.

    Metadata is kept column-wise as numpy arrays too, so a filtered query is a
    vectorised mask followed by one matrix product over the allowed rows.
    """

    backend = "inprocess"

    def __init__(self) -> None:
        self._ids: dict[str, list[str]] = {}
        self._vectors: dict[str, Vectors] = {}
        self._meta: dict[str, list[dict[str, Any]]] = {}
        self._columns: dict[str, dict[str, np.ndarray]] = {}
        self._lock = threading.Lock()

    def upsert(self, collection: str, ids: list[str], vectors: Vectors, metadatas: list[dict[str, Any]]) -> None:
        if not ids:
            return
        with self._lock:
            self._delete_locked(collection, ids)
            old = self._vectors.get(collection)
            new = np.asarray(vectors, dtype=np.float32)
            self._vectors[collection] = new if old is None or not len(old) else np.vstack([old, new])
            self._ids.setdefault(collection, []).extend(ids)
            self._meta.setdefault(collection, []).extend(dict(m) for m in metadatas)
            self._columns.pop(collection, None)

    def _column(self, collection: str, key: str) -> np.ndarray:
        columns = self._columns.setdefault(collection, {})
        if key not in columns:
            columns[key] = np.array([m.get(key) for m in self._meta[collection]], dtype=object)
        return columns[key]

    def _mask(self, collection: str, where: Where | None) -> np.ndarray:
        rows = len(self._ids[collection])
        mask = np.ones(rows, dtype=bool)
        if not where:
            return mask
        clauses = where["$and"] if "$and" in where else [{k: v} for k, v in where.items()]
        for clause in clauses:
            for key, expected in clause.items():
                column = self._column(collection, key)
                if isinstance(expected, dict):
                    if "$lte" in expected:
                        present = np.array([v is not None for v in column], dtype=bool)
                        values = np.where(present, column, expected["$lte"] + 1)
                        mask &= present & (values <= expected["$lte"])
                    if "$eq" in expected:
                        mask &= column == expected["$eq"]
                else:
                    mask &= column == expected
        return mask

    def query(self, collection: str, vector: Vectors, k: int, where: Where | None = None) -> list[VectorHit]:
        with self._lock:
            matrix = self._vectors.get(collection)
            if matrix is None or not len(matrix):
                return []
            rows = np.flatnonzero(self._mask(collection, where))
            if not len(rows):
                return []
            sims = matrix[rows] @ np.asarray(vector, dtype=np.float32).reshape(-1)
            count = min(k, len(rows))
            top = np.argpartition(-sims, count - 1)[:count] if count < len(rows) else np.arange(len(rows))
            top = top[np.argsort(-sims[top], kind="stable")]
            ids = self._ids[collection]
            return [VectorHit(ids[rows[i]], float(sims[i])) for i in top]

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        with self._lock:
            if collection not in self._ids:
                return {}
            mask = self._mask(collection, where)
            return {self._ids[collection][i]: dict(self._meta[collection][i]) for i in np.flatnonzero(mask)}

    def delete(self, collection: str, ids: list[str]) -> None:
        with self._lock:
            self._delete_locked(collection, ids)

    def _delete_locked(self, collection: str, ids: list[str]) -> None:
        if collection not in self._ids:
            return
        drop = set(ids)
        keep = [i for i, doc_id in enumerate(self._ids[collection]) if doc_id not in drop]
        if len(keep) == len(self._ids[collection]):
            return
        self._ids[collection] = [self._ids[collection][i] for i in keep]
        self._meta[collection] = [self._meta[collection][i] for i in keep]
        self._vectors[collection] = self._vectors[collection][keep]
        self._columns.pop(collection, None)

    def count(self, collection: str) -> int:
        return len(self._ids.get(collection, []))


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

    def _collection(self, name: str) -> Any:
        with self._lock:
            if name not in self._collections:
                self._collections[name] = self.client.get_or_create_collection(
                    COLLECTION_PREFIX + name, metadata={"hnsw:space": "ip"}, embedding_function=None
                )
            return self._collections[name]

    def upsert(self, collection: str, ids: list[str], vectors: Vectors, metadatas: list[dict[str, Any]]) -> None:
        if ids:
            self._collection(collection).upsert(
                ids=ids, embeddings=np.asarray(vectors, dtype=np.float32).tolist(), metadatas=metadatas
            )

    def query(self, collection: str, vector: Vectors, k: int, where: Where | None = None) -> list[VectorHit]:
        col = self._collection(collection)
        result = col.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).reshape(-1).tolist()],
            n_results=k,
            where=_chroma_where(where),
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0] if result.get("distances") else [1.0] * len(ids)
        return [VectorHit(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        result = self._collection(collection).get(where=_chroma_where(where), include=["metadatas"])
        return {i: dict(m or {}) for i, m in zip(result["ids"], result["metadatas"], strict=True)}

    def delete(self, collection: str, ids: list[str]) -> None:
        if ids:
            self._collection(collection).delete(ids=ids)

    def count(self, collection: str) -> int:
        return int(self._collection(collection).count())


def chroma_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_chroma(index_dir: Path | None = None, url: str | None = None) -> ChromaVectorStore:
    """A Chroma store under ``index_dir`` or at ``url`` (``http://host:port``).

    Raises:
        StoreUnavailable: when Chroma cannot be imported, opened or reached.
    """
    try:
        import chromadb

        if url:
            from urllib.parse import urlparse

            parsed = urlparse(url)
            client = chromadb.HttpClient(
                host=parsed.hostname or "127.0.0.1",
                port=parsed.port or 8000,
                ssl=parsed.scheme == "https",
                settings=chroma_settings(),
            )
            client.heartbeat()
            return ChromaVectorStore(client, backend="chroma-http")
        assert index_dir is not None, "index_dir or url is required"
        index_dir.mkdir(parents=True, exist_ok=True)
        return ChromaVectorStore(chromadb.PersistentClient(path=str(index_dir), settings=chroma_settings()))
    except Exception as exc:
        raise StoreUnavailable(f"Chroma unavailable: {exc}") from exc
