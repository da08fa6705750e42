"""Background work yields to the turn the player waits for.

A turn's own work (recall, compose, then adjudicate, record, autosave) is what
the player waits for besides the narrator. The background threads (the memory
worker embedding and consolidating, the mirror's Chroma writer, the autosave
writer) have plenty of time while the narrator generates and while the player
types, but on two cores a batch they start at the same moment as a recall
takes the GIL and a core from it: measured with ``bench/turn_overhead.py``, a
turn's wall time was ~35% over its own CPU time at the median.

So the turn thread marks its phases with :meth:`Foreground.busy`, and each
background job calls :meth:`Foreground.wait_idle` before it starts (never while
it holds a lock the turn needs). The wait is bounded (:data:`MAX_WAIT_S`), so
background work is late at worst, never starved; a busy thread that must wait
for background work (a consolidation the next turn needs, a flush) wraps that
wait in :meth:`Foreground.waiting`, which lets the background run meanwhile.

One gate per process (:data:`FOREGROUND`): it is about the process's cores, so
two games in one process (tests) share it, and each can only delay the other's
background work by the bound.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

MAX_WAIT_S = 2.0
"""The longest a background job waits for the turn thread (a turn's own work takes milliseconds)."""
QUIET_S = 0.05
"""... and how long the turn thread must have been idle: a job started the moment one turn ends would
overlap the next when turns come back to back (a player who types at once, ``storyecho run``, a bench). A
player reading the turn leaves seconds; a model generating, seconds too."""


class _Depth(threading.local):
    """A thread's nesting depth of :meth:`Foreground.busy` (0 in a thread that never marked one)."""

    depth = 0
    waits = 0
    """How many :meth:`Foreground.waiting` blocks the thread is in."""


class Foreground:
    """Counts the threads doing work the player waits for; background jobs wait until there are none."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = 0
        self._idle_since = 0.0
        """``time.monotonic()`` when the last busy thread stopped (0: long ago, or a busy thread waits)."""
        self._local = _Depth()

    @property
    def busy_now(self) -> bool:
        with self._cond:
            return self._busy > 0

    @property
    def waiting_here(self) -> bool:
        """Whether this thread is inside a :meth:`waiting` block: waiting for a model or for background work, with
        nothing of its own half done (where Ctrl-C may end a headless turn: ``game.cli``)."""
        return self._local.waits > 0

    def _depth(self) -> int:
        return self._local.depth

    def _mark(self, depth: int, *, urgent: bool = False) -> None:
        """Set this thread's nesting depth; the count of busy threads follows its 0 <-> 1 changes.
        ``urgent``: the thread waits for background work, which starts without the quiet time."""
        before = self._depth()
        self._local.depth = depth
        with self._cond:
            if before <= 0 < depth:
                self._busy += 1
            elif depth <= 0 < before:
                self._busy -= 1
                if not self._busy:
                    self._idle_since = 0.0 if urgent else time.monotonic()
                    self._cond.notify_all()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """The block is on the player's critical path: background jobs about to start wait for its end."""
        depth = self._depth()
        self._mark(depth + 1)
        try:
            yield
        finally:
            self._mark(depth)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Inside :meth:`busy`, a block that waits for background work: that work may run meanwhile.
        Outside it, nothing changes (another thread's busy block still holds the background back)."""
        depth = self._depth()
        self._mark(0, urgent=True)
        self._local.waits += 1
        try:
            yield
        finally:
            self._local.waits -= 1
            self._mark(depth)

    def wait_idle(self, timeout: float = MAX_WAIT_S, quiet: float = QUIET_S) -> bool:
        """Wait until no thread is busy and none was for ``quiet`` seconds (unless a busy thread is waiting
        for background work: :meth:`waiting`), or ``timeout`` seconds; whether it is idle now. A busy
        thread asking (a job run inline) does not wait for itself."""
        if self._depth() > 0:
            return True
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                if self._busy <= 0:
                    rest = self._idle_since + quiet - now
                    if rest <= 0:
                        return True
                else:
                    rest = deadline - now
                if now >= deadline:
                    return False
                self._cond.wait(min(rest, deadline - now))


FOREGROUND = Foreground()
"""The process's gate (see the module docstring)."""
