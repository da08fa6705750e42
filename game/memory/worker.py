"""Memory's background worker: one thread for consolidation, embedding and recall warm-up, or none.

Every job first lets a turn under way go first (``foreground.py``); a job that fails is logged, not raised (the
memory it works on stays as it was, and the next job of its kind covers its work). Jobs queued under a name
coalesce: one that has not started yet takes the place of the next (:meth:`Worker.submit_once`).

The thread is a daemon, and nothing waits for it without a bound: a summary call stalled on a dead endpoint can
take minutes (the narrator's timeout times its attempts), and closing the game must not. Once :meth:`Worker.closing`
is called, every wait ends by its deadline and :meth:`Worker.shutdown` abandons what is still running (a
``ThreadPoolExecutor``'s threads are joined when the interpreter exits, even after ``shutdown(wait=False)``: that
join is what made quitting wait for a stalled summary).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any

from game.memory.vectors.foreground import FOREGROUND

log = logging.getLogger("storyecho.memory")

CLOSE_GRACE_S = 3.0
"""How long closing lets background work finish before abandoning it (a summary under way is redone on load)."""

_Job = tuple[Future[Any], Callable[[], object]]


class Worker:
    """A single background daemon thread (``background=False``: every job runs at once, in the caller's thread)."""

    def __init__(self, background: bool) -> None:
        self._background = background
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._futures: list[Future[Any]] = []
        self._queued: set[str] = set()
        self._lock = threading.Lock()
        self._stopped = False
        self._deadline: float | None = None

    @property
    def background(self) -> bool:
        return self._background

    def submit(self, job: Callable[[], object]) -> Future[Any] | None:
        """Run ``job`` on the worker (None: it ran already, without one). Raises RuntimeError once shut down."""
        if not self._background:
            job()
            return None
        future: Future[Any] = Future()
        with self._lock:
            if self._stopped:
                raise RuntimeError("the memory worker is shut down")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memory", daemon=True)
                self._thread.start()
            self._futures = [f for f in self._futures if not f.done()] + [future]
            self._jobs.put((future, _logged(job)))
        return future

    def submit_once(self, name: str, job: Callable[[], object]) -> None:
        """Queue ``job`` unless a job of this ``name`` is queued and not started yet (it does the same work)."""
        with self._lock:
            if name in self._queued and self._background:
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

    def closing(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """The game is closing: from now on every wait ends within ``grace_s`` seconds of this call."""
        deadline = time.monotonic() + max(0.0, grace_s)
        with self._lock:
            self._deadline = deadline if self._deadline is None else min(self._deadline, deadline)

    def _bounded(self, timeout: float | None) -> float | None:
        with self._lock:
            deadline = self._deadline
        if deadline is None:
            return timeout
        left = max(0.0, deadline - time.monotonic())
        return left if timeout is None else min(timeout, left)

    def past_deadline(self) -> bool:
        """Whether :meth:`closing`'s deadline has passed: work done in the closing thread stops there too (the
        rest of a large save's vectors, ``VectorJobs.embed`` in ``restore.py``)."""
        return self._bounded(None) == 0.0

    def wait(self, timeout: float | None) -> None:
        """Let every job queued so far finish (at most ``timeout`` seconds, and never past :meth:`closing`'s
        deadline)."""
        with self._lock:
            futures = list(self._futures)
        wait(futures, timeout=self._bounded(timeout))
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()]

    def abandon(self) -> None:
        """Cancel what has not started; the job under way finishes alone, and nothing waits for it."""
        with self._lock:
            self._stopped = True
            futures, self._futures = self._futures, []
        for future in futures:
            future.cancel()  # the thread skips a cancelled job
        self._jobs.put(None)

    def shutdown(self) -> None:
        """Finish the queued jobs (within :meth:`closing`'s deadline, when it was called), then stop the thread;
        a job still running then is abandoned."""
        self.wait(None)
        self.abandon()

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future, job = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # noqa: BLE001 - _logged already logged it; the future carries it
                future.set_exception(exc)


def _logged(job: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        FOREGROUND.wait_idle()  # a turn's recall or record under way goes first (foreground.py)
        try:
            return job()
        except Exception:
            log.exception("memory background job failed")
            return None

    return run
