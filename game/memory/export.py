"""The memory state as a save's JSON: encoded without re-encoding the log, and taken later on another thread."""

from __future__ import annotations

import threading
from collections.abc import Callable

import orjson

from game.memory.records import Episode, MemoryState, model_fields, to_json


class StateEncoder:
    """Encodes a memory state, keeping each log episode's JSON (the log is append-only; an episode never changes
    once logged), so a save of a long game encodes only the turns played since the last one."""

    def __init__(self) -> None:
        self._log_json: list[tuple[Episode, orjson.Fragment]] = []

    def encode(self, state: MemoryState) -> bytes:
        """The JSON of ``state`` (the caller holds memory's lock: one consistent view)."""
        log_, cached = state.log, self._log_json
        kept = 0
        while kept < len(cached) and kept < len(log_) and cached[kept][0] is log_[kept]:
            kept += 1
        del cached[kept:]
        cached += [(e, orjson.Fragment(to_json(e))) for e in log_[kept:]]
        fields = dict(state.__dict__, log=[fragment for _, fragment in cached])
        return orjson.dumps(fields, default=model_fields)


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
