"""The memory state as a save's JSON: encoded without re-encoding the log, and taken later on another thread.

What a save re-uses from the last one is kept as :class:`PackedJson`: one growing buffer of JSON, not one small
``bytes`` object per item (each of those took ~4 KB of RSS: an honest 5,000-turn game paid ~35 MB for its
episodes and its history's turns; issue 33). The game's history (``saves/history.py``) keeps its turns the same way.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from game.memory.records import Episode, MemoryState, model_fields, to_json


class PackedJson:
    """A list of JSON values kept as one buffer: item ``i`` is ``buffer[ends[i - 1]:ends[i] - 1]``, each followed by
    a comma, so the JSON array of the first ``n`` is ``[`` + the buffer up to ``ends[n - 1] - 1`` + ``]`` (one copy)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._ends = array("Q")

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, encoded: bytes) -> None:
        """Add one item, given as its JSON."""
        self._buffer += encoded
        self._buffer += b","
        self._ends.append(len(self._buffer))

    def truncate(self, count: int) -> None:
        """Keep the first ``count`` items."""
        if count < len(self._ends):
            del self._buffer[self._ends[count - 1] if count > 0 else 0 :]
            del self._ends[count:]

    def array(self, count: int | None = None) -> bytes:
        """The JSON array of the first ``count`` items (all without)."""
        count = len(self._ends) if count is None else min(count, len(self._ends))
        if count == 0:
            return b"[]"
        with memoryview(self._buffer) as view:  # released at once: the buffer may grow again
            return b"".join((b"[", view[: self._ends[count - 1] - 1], b"]"))

    def fragment(self, count: int | None = None) -> orjson.Fragment:
        """:meth:`array` spliced as is into a document ``orjson.dumps`` writes."""
        return orjson.Fragment(self.array(count))

    def items(self, count: int | None = None) -> Iterator[Any]:
        """The first ``count`` items (all without), decoded one at a time."""
        start = 0
        for end in self._ends[: len(self._ends) if count is None else count]:
            yield orjson.loads(self._buffer[start : end - 1])
            start = end

    @property
    def nbytes(self) -> int:
        """Bytes held (the buffer and the offsets)."""
        return len(self._buffer) + self._ends.itemsize * len(self._ends)


class StateEncoder:
    """Encodes a memory state, keeping the log's JSON (the log is append-only; an episode never changes once
    logged), so a save of a long game encodes only the turns played since the last one."""

    def __init__(self) -> None:
        self._episodes: list[Episode] = []
        """The episodes encoded, to tell by identity which are still the state's (an undo or a load replaces them)."""
        self._log = PackedJson()

    def encode(self, state: MemoryState) -> bytes:
        """The JSON of ``state`` (the caller holds memory's lock: one consistent view)."""
        log_, done = state.log, self._episodes
        kept = 0
        while kept < len(done) and kept < len(log_) and done[kept] is log_[kept]:
            kept += 1
        del done[kept:]
        self._log.truncate(kept)
        for episode in log_[kept:]:
            self._log.append(to_json(episode))
            done.append(episode)
        fields = dict(state.__dict__, log=self._log.fragment())
        return orjson.dumps(fields, default=model_fields)

    @property
    def nbytes(self) -> int:
        """Bytes this cache holds beyond the state itself (its JSON, its offsets and its pointers)."""
        return self._log.nbytes + 8 * len(self._episodes)


class LaterExport:
    """One ``GameMemory.export_later``: ``export()`` computed once, by whichever thread asks first."""

    def __init__(self, export: Callable[[], bytes]) -> None:
        self._export = export
        self._lock = threading.Lock()
        self._result: bytes | None = None
        self._error: Exception | None = None

    def take(self) -> bytes:
        with self._lock:
            if self._result is None and self._error is None:
                try:
                    self._result = self._export()
                except Exception as exc:  # noqa: BLE001 - kept and raised to every taker
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._result is not None
            return self._result
