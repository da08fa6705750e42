"""Log records while the Textual game is on screen: held, never written over it.

``storyecho`` sets logging up before the game starts (``game.args.configure_logging``): a ``StreamHandler`` on
the real stderr, which Textual draws on too. Textual redirects ``sys.stderr`` while it runs, but a handler made
before keeps the stream it was given, so every warning (a narrator call that failed, a summary that timed out,
httpx's request lines with ``-v``) was painted across the game's screen. While the app runs, :class:`LogHold`
takes the handlers that write to a terminal stream off the root logger (and Python's last-resort handler) and
keeps the records instead, redacted (``game.text.RedactingFilter``), the last :data:`HELD` of them; once the
game is closed and the terminal is back, :meth:`LogHold.replay` hands them to the handlers they were meant for.
"""

from __future__ import annotations

import io
import logging
from collections import deque

from game.text import RedactingFilter

HELD = 200
"""The most records kept while the game runs (the oldest go first)."""


def _to_terminal(handler: logging.Handler) -> bool:
    """Whether ``handler`` writes to a stream that may be the terminal: any stream but a file or a string buffer
    (the stream is not compared with ``sys.stderr``: Textual has replaced that by the time the game mounts)."""
    return (
        isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
        and not isinstance(handler.stream, io.StringIO)
    )


class LogHold(logging.Handler):
    """While held, the root logger's terminal handlers are off and their records are kept here."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.addFilter(RedactingFilter())
        self.records: deque[logging.LogRecord] = deque(maxlen=HELD)
        self.dropped = 0
        self._taken: list[logging.Handler] = []
        self._last_resort: logging.Handler | None = None
        self.holding = False

    def createLock(self) -> None:
        """No handler lock: :meth:`emit` only appends to a deque, which is atomic. With one, the game's tests hung:
        after a test whose narrator failed, the lock stayed owned by a thread no longer running, and the next
        record logged anywhere in the process waited for it for ever (``tests/tui/test_terminal_logs.py``)."""
        self.lock = None

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) == self.records.maxlen:
            self.dropped += 1
        self.records.append(record)

    def hold(self) -> None:
        """Take the terminal handlers off the root logger; records come here instead."""
        if self.holding:
            return
        root = logging.getLogger()
        self._taken = [h for h in root.handlers if _to_terminal(h)]
        for handler in self._taken:
            root.removeHandler(handler)
        root.addHandler(self)
        self._last_resort, logging.lastResort = logging.lastResort, self
        self.holding = True

    def release(self) -> None:
        """Put the terminal handlers back (the records held stay, for :meth:`replay`)."""
        if not self.holding:
            return
        root = logging.getLogger()
        root.removeHandler(self)
        for handler in self._taken:
            root.addHandler(handler)
        if logging.lastResort is self:
            logging.lastResort = self._last_resort
        self.holding = False

    def replay(self) -> None:
        """Hand the held records to the handlers they were meant for (once the terminal is the game's no more)."""
        self.release()
        records, self.records = list(self.records), deque(maxlen=HELD)
        targets = self._taken or ([self._last_resort] if self._last_resort is not None else [])
        if self.dropped:
            note = logging.LogRecord("storyecho", logging.WARNING, __file__, 0, "", None, None)
            note.msg = f"{self.dropped} earlier log records of the game were not kept"
            records.insert(0, note)
            self.dropped = 0
        for record in records:
            for handler in targets:
                if record.levelno >= handler.level:
                    handler.handle(record)


TERMINAL = LogHold()
"""The one hold of this process (one game on one terminal)."""


class HoldsLogs:
    """Mixed into the app: the terminal's log handlers are held from its mount to its unmount (Textual calls
    the ``on_mount`` and ``on_unmount`` of every class of the app, this one's first)."""

    def on_mount(self) -> None:
        TERMINAL.hold()

    def on_unmount(self) -> None:
        TERMINAL.release()
