"""A Chroma server that may go away: said once, backed off from, caught up with (issue 45, item 5).

Measured before (``--chroma-url``, the server stopped mid-game): games played on silently, each turn at 11x the
time and 7x the CPU, while the vectors they could not send piled up: every search and every write tried the
server again, and every failed write left its texts pending, embedded again at the next try.

:class:`RemoteStore` wraps the server's :class:`~game.memory.vectors.chroma.ChromaVectorStore`:

- the first call that finds the server unreachable tells the player once (``say``) and starts a back-off: for
  the next second, then 2, 4, ... up to :data:`BACKOFF_MAX_S`, every call fails at once without a request
  (searches rank by keywords meanwhile: ``hybrid.py`` falls back), and only then is the server tried again;
- writes meanwhile are kept, vectors and all, in a bounded queue (:data:`QUEUE_LIMIT` vectors): nothing is embedded
  twice; past the bound a write is refused before its texts are embedded (:meth:`RemoteStore.accepts`: they stay
  pending, searchable by keyword, and are embedded when the server is back);
- the first call that reaches the server again sends the queue first (catching up, in order) and tells the
  player the server is back.

A failure that is not the server being unreachable (a refused request, a wrong collection) is raised as it was.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from game.memory.vectors.chroma import ChromaVectorStore
from game.memory.vectors.embedders import EmbeddingSpace, Vectors
from game.memory.vectors.metadata_table import Where
from game.memory.vectors.stores import DenseAnswer, StoreUnavailable, VectorHit

log = logging.getLogger("storyecho.memory")

BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 60.0
"""The longest wait between two tries of an unreachable server."""
QUEUE_LIMIT = 20_000
"""The most vectors kept for an unreachable server (about 30 MB at 384 dimensions)."""

T = TypeVar("T")


@dataclass(frozen=True)
class _Write:
    collection: str
    ids: list[str]
    vectors: np.ndarray
    metadatas: list[dict[str, Any]]
    space: EmbeddingSpace | None


GONE_STATUSES = (502, 503, 504)
"""What a proxy in front answers when the server behind it is down."""


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the server could not be reached (not that it refused what was asked): a connection
    refused, reset or timed out, or a proxy's 502-504 (Chroma's client raises those as a bare ``Exception`` with
    httpx's error as its context)."""
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    try:
        import httpx
    except ImportError:  # pragma: no cover - chromadb's client is built on httpx
        return False
    if isinstance(exc, httpx.TransportError):
        return True
    cause = exc.__cause__ or exc.__context__
    return isinstance(cause, httpx.HTTPStatusError) and cause.response.status_code in GONE_STATUSES


class RemoteStore:
    """A Chroma server's store that says once when the server is unreachable, backs off, and catches up.

    Args:
        store: the server's store (``open_chroma(url=...)``).
        where: the server's address, as the player is told it.
        say: how the player is told (the game's notices).
        clock: the time, in seconds (a test's own clock may stand in).
    """

    def __init__(
        self,
        store: ChromaVectorStore,
        where: str,
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.where, self.say, self.clock = store, where, say, clock
        self.backend = store.backend
        self.down = False
        """Whether the server was unreachable at the last try."""
        self.retry_at = 0.0
        self.backoff_s = BACKOFF_FIRST_S
        self.queued: deque[_Write] = deque()
        self.queued_vectors = 0
        self.tries = 0
        """Requests tried while the server was down (each back-off lets one through)."""
        self.refused = 0
        """Calls failed at once, without a request, while the server was down."""
        self._lock = threading.RLock()
        """Guards the state above; never held over a request."""
        self._sending = threading.Lock()
        """Held while the queue is sent: one catch-up at a time."""

    def accepts(self, count: int) -> bool:
        """Whether a write of ``count`` vectors would be kept now (sent, or queued within the bound): a caller
        embeds them only then."""
        with self._lock:
            return not self.down or self.queued_vectors + count <= QUEUE_LIMIT

    def _call(self, request: Callable[[], T]) -> T:
        """``request`` to the server, unless it is down and its back-off runs (one call a back-off tries it); the
        queue is sent first when the server answers again. The lock is never held over a request."""
        with self._lock:
            trying = self.down
            if trying:
                if self.clock() < self.retry_at:
                    self.refused += 1
                    raise StoreUnavailable(f"the Chroma server at {self.where} is unreachable")
                self.tries += 1
                self.retry_at = self.clock() + self.backoff_s  # the others fail at once while this one tries
        try:
            if trying:
                self._catch_up()
            return request()
        except Exception as exc:
            if not unreachable(exc):
                raise
            with self._lock:
                first = self._went_down(exc)
            if first:
                self._tell(
                    f"The memory server ({self.where}) cannot be reached: memories are searched by keywords and "
                    "new ones kept here until it is back."
                )
            raise StoreUnavailable(f"the Chroma server at {self.where} is unreachable: {exc}") from exc

    def _went_down(self, exc: BaseException) -> bool:
        """Note a failed try (call under the lock): whether the server was up until now (the player is told)."""
        first = not self.down
        if first:
            self.down = True
            self.backoff_s = BACKOFF_FIRST_S
            log.warning("the Chroma server at %s is unreachable: %s", self.where, exc)
        else:
            self.backoff_s = min(BACKOFF_MAX_S, self.backoff_s * 2)
        self.retry_at = self.clock() + self.backoff_s
        return first

    def _catch_up(self) -> None:
        """Send what was queued while the server was down, oldest first; it is up when this returns (writes queued
        meanwhile are sent too)."""
        with self._sending:
            self.store.client.heartbeat()
            sent = 0
            while True:
                with self._lock:
                    if not self.queued:
                        was_down, self.down = self.down, False
                        break
                    write = self.queued[0]
                self.store.upsert(write.collection, write.ids, write.vectors, write.metadatas, write.space)
                with self._lock:
                    self.queued.popleft()
                    self.queued_vectors -= len(write.ids)
                sent += len(write.ids)
        if was_down:
            log.info("the Chroma server at %s is back; %d queued vectors sent", self.where, sent)
            self._tell(f"The memory server ({self.where}) is back: what was kept meanwhile is sent ({sent} vectors).")

    def _tell(self, message: str) -> None:
        try:
            self.say(message)
        except Exception:
            log.exception("a memory server notice could not be shown")

    def upsert(
        self,
        collection: str,
        ids: list[str],
        vectors: Vectors,
        metadatas: list[dict[str, Any]],
        space: EmbeddingSpace | None = None,
    ) -> None:
        if not ids:
            return
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        write = _Write(collection, list(ids), matrix, list(metadatas), space)
        try:
            self._call(lambda: self.store.upsert(collection, ids, matrix, metadatas, space))
        except StoreUnavailable:
            with self._lock:
                if not self.down or self.queued_vectors + len(ids) > QUEUE_LIMIT:
                    raise
                self.queued.append(write)  # sent when the server is back; the caller's vectors are done
                self.queued_vectors += len(ids)

    def query(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> list[VectorHit]:
        return self._call(lambda: self.store.query(collection, vector, k, where, space))

    def query_arrays(
        self, collection: str, vector: Vectors, k: int, where: Where | None = None, space: EmbeddingSpace | None = None
    ) -> DenseAnswer:
        return DenseAnswer.of(self.query(collection, vector, k, where, space))

    def metadata(self, collection: str, where: Where | None = None) -> dict[str, dict[str, Any]]:
        return self._call(lambda: self.store.metadata(collection, where))

    def existing(self, collection: str, ids: list[str]) -> set[str]:
        found = self._call(lambda: self.store.existing(collection, ids))
        with self._lock:  # what waits in the queue is the server's as soon as it is back
            wanted = set(ids)
            queued = {i for write in self.queued if write.collection == collection for i in write.ids}
            return found | (queued & wanted)

    def delete(self, collection: str, ids: list[str]) -> None:
        self._call(lambda: self.store.delete(collection, ids))

    def count(self, collection: str) -> int:
        return self._call(lambda: self.store.count(collection))

    def collections(self) -> dict[str, dict[str, Any]]:
        return self._call(self.store.collections)

    def drop(self, collection: str) -> None:
        self._call(lambda: self.store.drop(collection))

    def flush(self) -> None:
        """Send what is queued when the server's back-off allows a try (a game closing, a save): never waits."""
        with self._lock:
            if not self.queued:
                return
        try:
            self._call(lambda: None)
        except StoreUnavailable as exc:
            log.info("%d vectors stay queued: %s", self.queued_vectors, exc)

    def close(self) -> None:
        """Try once more to send the queue; what stays is embedded again by the next game that needs it (the
        texts are in the saves)."""
        with self._lock:
            self.retry_at = 0.0
        self.flush()
        if self.queued_vectors:
            log.warning("%d vectors never reached the Chroma server at %s", self.queued_vectors, self.where)
        self.store.close()
