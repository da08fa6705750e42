"""The memory state as a save's JSON: encoded without re-encoding the log, and taken later on another thread.

What a save re-uses from the last one is kept as :class:`PackedJson`: one growing buffer of JSON, not one small
``bytes`` object per item (each of those took ~4 KB of RSS: an honest 5,000-turn game paid ~35 MB for its
episodes and its history's turns; issue 33). The game's history (``saves/history.py``) keeps its turns the same way.
"""

from __future__ import annotations

import hashlib
import re
import threading
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from game.memory.records import MemoryState, model_fields, to_json

PART_BYTES = 256 * 1024
"""When the JSON a list holds past its last part reaches this many bytes, it is sealed as a part of its own
(:class:`Part`): a save refers to its parts, written once each, and rewrites only what follows them (issue 43: a long
game's every autosave rewrote the whole file). Read when a list is made (tests lower it)."""


@dataclass(frozen=True)
class Part:
    """A run of a list's items, sealed: never changed, written once to a file named by its digest.

    ``data`` is the items' JSON each followed by a comma (a slice of :class:`PackedJson`'s buffer); the file holds
    :meth:`json`, the JSON array of them, and its name is that array's SHA-256 (``digest``), so a file can be
    checked against its name when it is read.
    """

    digest: str
    data: bytes
    count: int
    """Items in the part."""
    objects: int
    """JSON objects and values in :meth:`json` (``format.check_size``'s counts, kept for the save's totals)."""
    values: int

    @classmethod
    def of(cls, data: bytes, count: int) -> Part:
        json = cls.array(data)
        objects, values = json_counts(json)
        return cls(hashlib.sha256(json).hexdigest(), data, count, objects, values)

    @staticmethod
    def array(data: bytes) -> bytes:
        return b"[" + data[:-1] + b"]" if data else b"[]"

    def json(self) -> bytes:
        """The part's file: the JSON array of its items."""
        return self.array(self.data)


_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.S)
"""A JSON string, its escapes included (possessive: linear on any bytes, an unclosed quote included)."""


def json_counts(data: bytes) -> tuple[int, int]:
    """The JSON objects and values ``data`` holds, counted as ``{`` and ``,`` outside the strings (each object opens
    with a brace, each value after the first of its array or object follows a comma), so that what a player types
    never counts (issue 43: a player who typed braces could no longer save from turn 36). Linear on any bytes."""
    structure = _STRING.sub(b'""', data)  # what is left is the JSON's own marks
    return structure.count(b"{"), structure.count(b",")


class PackedJson:
    """A list of JSON values kept as one buffer: item ``i`` is ``buffer[ends[i - 1]:ends[i] - 1]``, each followed by
    a comma, so the JSON array of the first ``n`` is ``[`` + the buffer up to ``ends[n - 1] - 1`` + ``]`` (one copy).

    With ``sealed`` (the bytes a run of items reaches before it is sealed, :data:`PART_BYTES` by default), the
    buffer is split into :class:`Part` s, each the run of items since the last one that reached that size, and what
    follows them: the parts depend only on the items before their end, so every save of one game shares them, and
    an undo into a part unseals it (:meth:`truncate`).
    """

    def __init__(self, *, sealed: bool = False) -> None:
        self._parts: list[Part] = []
        self._start = 0
        """Offset in the whole (the parts, then the buffer) where the buffer starts."""
        self._buffer = bytearray()
        self._ends = array("Q")
        """Offset in the whole after each item's comma."""
        self._seal = PART_BYTES if sealed else 0

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, encoded: bytes) -> None:
        """Add one item, given as its JSON."""
        self._buffer += encoded
        self._buffer += b","
        self._ends.append(self._start + len(self._buffer))
        if self._seal and len(self._buffer) >= self._seal:
            data = bytes(self._buffer)
            self._parts.append(Part.of(data, len(self._ends) - self._sealed_count()))
            self._start += len(data)
            self._buffer = bytearray()

    def _sealed_count(self) -> int:
        return sum(part.count for part in self._parts)

    def truncate(self, count: int) -> None:
        """Keep the first ``count`` items."""
        if count >= len(self._ends):
            return
        sealed = self._sealed_count()
        while self._parts and sealed > count:  # an undo into a part: it is a buffer again
            part = self._parts.pop()
            sealed -= part.count
            self._start -= len(part.data)
            self._buffer[:0] = part.data
        end = self._ends[count - 1] if count > 0 else 0
        del self._buffer[end - self._start :]
        del self._ends[count:]

    def _whole(self, end: int, start: int = 0) -> bytes:
        """The whole's bytes from ``start`` to ``end`` (parts and buffer): only the pieces that hold them are read."""
        pieces: list[bytes] = []
        offset = 0
        for part in self._parts:
            size = len(part.data)
            if offset + size > start and offset < end:
                pieces.append(part.data[max(0, start - offset) : end - offset])
            offset += size
        if end > self._start:
            with memoryview(self._buffer) as view:  # released at once: the buffer may grow again
                pieces.append(bytes(view[max(0, start - self._start) : end - self._start]))
        return b"".join(pieces)

    def array(self, count: int | None = None) -> bytes:
        """The JSON array of the first ``count`` items (all without)."""
        count = len(self._ends) if count is None else min(count, len(self._ends))
        if count == 0:
            return b"[]"
        return Part.array(self._whole(self._ends[count - 1]))

    def fragment(self, count: int | None = None) -> orjson.Fragment:
        """:meth:`array` spliced as is into a document ``orjson.dumps`` writes."""
        return orjson.Fragment(self.array(count))

    def parted(self, count: int | None = None) -> tuple[tuple[Part, ...], orjson.Fragment]:
        """The first ``count`` items (all without) as the parts sealed within them and the JSON array of the rest."""
        count = len(self._ends) if count is None else min(count, len(self._ends))
        parts: list[Part] = []
        within = 0
        for part in self._parts:
            if within + part.count > count:
                break
            parts.append(part)
            within += part.count
        start = self._ends[within - 1] if within else 0
        end = self._ends[count - 1] if count else 0
        return tuple(parts), orjson.Fragment(Part.array(self._whole(end, start)))

    def items(self, count: int | None = None) -> Iterator[Any]:
        """The first ``count`` items (all without), decoded one at a time."""
        count = len(self._ends) if count is None else min(count, len(self._ends))
        whole = self._whole(self._ends[count - 1]) if count else b""
        start = 0
        for end in self._ends[:count]:
            yield orjson.loads(whole[start : end - 1])
            start = end

    @property
    def nbytes(self) -> int:
        """Bytes held (the buffer, the parts and the offsets)."""
        return len(self._buffer) + self._start + self._ends.itemsize * len(self._ends)


class Parted(bytes):
    """The JSON of a document whose long lists hold only their items past their sealed parts, and those parts
    (:attr:`parts`, by the list's name): what a save writes (``saves/format.py``)."""

    parts: dict[str, tuple[Part, ...]]

    @classmethod
    def of(cls, data: bytes, parts: dict[str, tuple[Part, ...]]) -> Parted:
        made = cls(data)
        made.parts = {name: found for name, found in parts.items() if found}
        return made


class _Encoded:
    """A list of saved models, kept as their JSON (models never changed once in the list: logged episodes,
    summaries), so a save encodes only the items added since the last one."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        """The models encoded, to tell by identity which are still the state's (an undo or a load replaces them)."""
        self.packed = PackedJson(sealed=True)

    def sync(self, items: list[Any]) -> None:
        done = self.items
        if done and len(done) <= len(items) and done[-1] is items[len(done) - 1] and done[0] is items[0]:
            kept = len(done)  # only appended to since (the usual turn): no walk over a long game's log
        else:
            kept = 0
            while kept < len(done) and kept < len(items) and done[kept] is items[kept]:
                kept += 1
        del done[kept:]
        self.packed.truncate(kept)
        for item in items[kept:]:
            self.packed.append(to_json(item))
            done.append(item)


class StateEncoder:
    """Encodes a memory state, keeping the JSON of its log and summaries (both append-only; an episode or a summary
    never changes once recorded), so a save of a long game encodes only what was recorded since the last one."""

    def __init__(self) -> None:
        self._log = _Encoded()
        self._summaries = _Encoded()

    def encode(self, state: MemoryState) -> bytes:
        """The JSON of ``state`` (the caller holds memory's lock: one consistent view)."""
        self._log.sync(state.log)
        self._summaries.sync(state.summaries)
        fields = dict(state.__dict__, log=self._log.packed.fragment(), summaries=self._summaries.packed.fragment())
        return orjson.dumps(fields, default=model_fields)

    def encode_parted(self, state: MemoryState) -> Parted:
        """:meth:`encode` as a save writes it (:class:`Parted`): the log and the summaries past their parts."""
        self._log.sync(state.log)
        self._summaries.sync(state.summaries)
        log_parts, log_ = self._log.packed.parted()
        summary_parts, summaries = self._summaries.packed.parted()
        data = orjson.dumps(dict(state.__dict__, log=log_, summaries=summaries), default=model_fields)
        return Parted.of(data, {"log": log_parts, "summaries": summary_parts})

    @property
    def nbytes(self) -> int:
        """Bytes this cache holds beyond the state itself (its JSON, its offsets and its pointers)."""
        kept = (self._log, self._summaries)
        return sum(k.packed.nbytes + 8 * len(k.items) for k in kept)


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
