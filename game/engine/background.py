"""The autosave thread of a game session: one write at a time, in order, and what it has to tell the player.

A session hands its autosave to this thread once the turn is over (``session.py``'s module docstring says why),
and every other use of the slots waits for the write under way first, so saves never land out of order. What the
thread has to say (a failed write, a game gone on in a new slot) waits here for the next result to tell it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from game.memory.vectors.foreground import FOREGROUND


class Background:
    """One worker thread for a session's writes, and the notices they leave."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._told: list[str] = []
        self._lock = threading.Lock()

    def submit(self, work: Callable[..., None], *args: Any) -> None:
        """Run ``work(*args)`` on the thread, after the write under way."""
        self.wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autosave")
        self._pending = self._pool.submit(work, *args)

    def wait(self) -> None:
        """Wait until the write under way (if any) is done or has failed (it tells its failure itself)."""
        pending = self._pending
        if pending is not None:
            with FOREGROUND.waiting():
                pending.result()
            self._pending = None

    def tell(self, notice: str) -> None:
        """Keep ``notice`` for the next result."""
        with self._lock:
            self._told.append(notice)

    def told(self) -> list[str]:
        """The notices not told yet, oldest first (and forget them)."""
        with self._lock:
            told, self._told = self._told, []
        return told

    def stop(self) -> None:
        """Wait for the write under way, then end the thread (a later submit starts another)."""
        self.wait()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
