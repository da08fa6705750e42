"""Memory's background worker: one thread for consolidation, embedding and recall warm-up, or none.

Every job first lets a turn under way go first (``foreground.py``); a job that fails is logged, not raised (the
memory it works on stays as it was, and the next job of its kind covers its work). Jobs queued under a name
coalesce: one that has not started yet takes the place of the next (:meth:`Worker.submit_once`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from game.memory.foreground import FOREGROUND

log = logging.getLogger("storyecho.memory")


class Worker:
    """A single background thread (``background=False``: every job runs at once, in the caller's thread)."""

    def __init__(self, background: bool) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory") if background else None
        self._futures: list[Future[Any]] = []
        self._queued: set[str] = set()
        self._lock = threading.Lock()

    @property
    def background(self) -> bool:
        return self._executor is not None

    def submit(self, job: Callable[[], object]) -> Future[Any] | None:
        """Run ``job`` on the worker (None: it ran already, without one). Raises RuntimeError once shut down."""
        if self._executor is None:
            job()
            return None
        future = self._executor.submit(_logged(job))
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [future]
        return future

    def submit_once(self, name: str, job: Callable[[], object]) -> None:
        """Queue ``job`` unless a job of this ``name`` is queued and not started yet (it does the same work)."""
        with self._lock:
            if name in self._queued and self._executor is not None:
                return
            self._queued.add(name)

        def run() -> object:
            with self._lock:
                self._queued.discard(name)
            return job()

        try:
            self.submit(run)
        except RuntimeError:  # shut down (after close): nothing left to do the work for
            with self._lock:
                self._queued.discard(name)
            raise

    def wait(self, timeout: float | None) -> None:
        """Let every job queued so far finish (at most ``timeout`` seconds)."""
        with self._lock:
            futures = list(self._futures)
        wait(futures, timeout=timeout)
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()]

    def abandon(self) -> None:
        """Cancel what has not started; the job under way finishes alone, and nothing waits for it."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)


def _logged(job: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        FOREGROUND.wait_idle()  # a turn's recall or record under way goes first (foreground.py)
        try:
            return job()
        except Exception:
            log.exception("memory background job failed")
            return None

    return run
