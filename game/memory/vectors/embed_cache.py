"""Vectors remembered by text between runs, so a new game does not embed again what the last one did.

Every new game of a story seeds the same Story Bible entries from its content
(``bible.seed_from_content``), and its first recall waits until they are
embedded: 15 texts, ~0.2 s of the first turn with the ONNX embedder, each
start. Their vectors cannot be found in the index (a vector id carries the
session), but the vector of a text is a function of the text and the model:
:class:`CachedEmbedder` looks texts up by their SHA-1 in a bounded table of
the most recently used ones (:data:`LIMIT`), embeds only the rest, and the
table is saved beside the index when the game closes (``MirroredStore.close``,
merged with what another game on the same data folder saved meanwhile),
one file per embedding space (``<data>/.index.embeddings/<space slug>.npz``).
A file that cannot be read is ignored (everything is embedded, as without it).
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from game.files import replace_durably
from game.memory.vectors.embedders import Embedder, Vectors, space_of

log = logging.getLogger("storyecho.memory")

DIGEST = 20
"""Bytes of a key (SHA-1 of the text)."""
LIMIT = 4096
"""Texts kept (most recently used first): 6 MB of 384-dimensional vectors at most."""


class CachedEmbedder:
    """``inner`` with its vectors remembered by text (see the module docstring); the same space as ``inner``."""

    def __init__(self, inner: Embedder, folder: Path, limit: int = LIMIT) -> None:
        self.inner = inner
        self.path = folder / f"{space_of(inner).slug}.npz"
        self.limit = limit
        self._table: OrderedDict[bytes, np.ndarray] | None = None
        self._changed = False
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def model_version(self) -> str:
        return self.inner.model_version

    def _loaded(self) -> OrderedDict[bytes, np.ndarray]:
        """The table, read from disk on first use. Call under the lock."""
        if self._table is None:
            self._table = self._read()
        return self._table

    def _read(self) -> OrderedDict[bytes, np.ndarray]:
        """The table the file holds (empty when there is none or it cannot be read)."""
        table: OrderedDict[bytes, np.ndarray] = OrderedDict()
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                keys, vectors = saved["keys"], np.asarray(saved["vectors"], dtype=np.float32)
            if keys.ndim != 2 or keys.shape[1] != DIGEST or vectors.ndim != 2 or len(keys) != len(vectors):
                raise ValueError("its arrays disagree")
            table.update(zip((bytes(k) for k in np.asarray(keys, dtype=np.uint8)), vectors, strict=True))
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001 - an unreadable cache means embedding, never a crash
            log.warning("the embedding cache %s cannot be read (%s); embedding instead", self.path, exc)
        return table

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return self.inner.embed(texts)
        keys = [hashlib.sha1(text.encode()).digest() for text in texts]
        with self._lock:
            table = self._loaded()
            known = {n: table[key] for n, key in enumerate(keys) if key in table}
            for key in keys:
                if key in table:
                    table.move_to_end(key)
        first: dict[bytes, int] = {}  # each missing text once, however often the batch repeats it
        for n, key in enumerate(keys):
            if n not in known:
                first.setdefault(key, n)
        missing = list(first.values())
        fresh = np.asarray(self.inner.embed([texts[n] for n in missing]), dtype=np.float32) if missing else None
        dimension = fresh.shape[1] if fresh is not None else next(iter(known.values())).shape[0]
        out = np.empty((len(texts), dimension), dtype=np.float32)
        for n, vector in known.items():
            out[n] = vector
        if fresh is not None:
            made = dict(zip(first, fresh, strict=True))
            for n, key in enumerate(keys):
                if n not in known:
                    out[n] = made[key]
            with self._lock:
                table = self._loaded()
                for key, vector in made.items():
                    table[key] = vector.copy()
                    table.move_to_end(key)
                while len(table) > self.limit:
                    table.popitem(last=False)
                self._changed = True
        return out

    def save(self) -> None:
        """Write the table if it changed (atomically: a crash leaves the old file or the new one).

        What the file holds that this table has not (another StoryEcho on the same data folder saved it
        meanwhile: ``mirror.MirroredStore.open_reader``) is kept, as the least recently used."""
        with self._lock:
            if not self._changed or not self._table:
                return
            mine = list(self._table.items())
            self._changed = False
        table = self._read()
        for key, vector in mine:
            table.pop(key, None)
            table[key] = vector
        while len(table) > self.limit:
            table.popitem(last=False)
        keys = np.frombuffer(b"".join(table), dtype=np.uint8).reshape(-1, DIGEST)
        vectors = np.stack(list(table.values())).astype(np.float32)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = io.BytesIO()
        np.savez(data, keys=keys, vectors=vectors)
        replace_durably(self.path, data.getvalue())
