"""Which slots are open in a window: a game in play holds the slot it saves to, so that a second StoryEcho on the same
data folder knows before it loads that game (issue 43, item 2: two windows of one game wrote over each other's
moments, and the second was told only after the fact, by the slot header check of ``kept.write_own``).

A game holds an OS advisory lock (``flock``) on ``<data dir>/.open/<slot>.lock`` for as long as it plays in that
slot, and the file names the game (its line). The lock belongs to the process: it dies with it, so a crash
or a kill leaves nothing held (the file may stay behind; unlocked, it means nothing, and the slot's next holder
removes it when it lets go). Another process asks :func:`held_elsewhere`, a shared try that never waits and never
takes the slot. Within one process the slots held are counted here instead: ``flock`` locks taken on two
descriptors of one process refuse each other, and two sessions of one process (a test's) are one window.

A game also holds the line it plays on (``saves/lines.py``, issue 43, item 1) the same way, in
``<data dir>/.open/lines/<digest>.lock`` (:func:`hold_line`), so that no two windows go on on one line.

Where there is no ``flock`` (Windows) nothing is held and nothing is found held: the header checks of
``kept.write_own`` are then the only guard, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from game.saves.slots import check_name

if sys.platform != "win32":
    import fcntl

FOLDER = ".open"
"""The lock files' folder in the data folder (a dot folder: never listed as a slot)."""
LINES = "lines"
"""The lines' lock files' folder in it."""
TRIES = 20
TRY_PAUSE_S = 0.005
"""A slot found locked is tried again for ``TRIES * TRY_PAUSE_S``: another process's look
(:func:`held_elsewhere`) holds it for microseconds, a window for as long as it plays."""


@dataclass
class _Lock:
    fd: int
    holders: int = 1


_guard = threading.Lock()
_held: dict[Path, _Lock] = {}
"""The lock files this process holds, each with how many of its sessions hold it."""


def lock_path(root: Path, slot: str) -> Path:
    """The lock file of ``slot`` in the data folder ``root``.

    Raises:
        SaveError: ``slot`` is not a slot name.
    """
    return Path(root) / FOLDER / f"{check_name(slot)}.lock"


class OpenSlot:
    """A slot this process holds open for a game (see the module docstring); :meth:`release` lets go of it."""

    def __init__(self, path: Path, slot: str) -> None:
        self.path = path
        self.slot = slot
        self._released = False

    def record(self, game: str) -> None:
        """Name the game played in the slot, for another window that finds it held (its turn is in the save)."""
        with _guard:
            lock = _held.get(self.path)
            if lock is None or self._released or lock.fd < 0:
                return
            text = f"{game}\n{os.getpid()}\n".encode()
            with contextlib.suppress(OSError):  # the name only words a message; the lock is what counts
                os.pwrite(lock.fd, text, 0)
                os.ftruncate(lock.fd, len(text))

    def release(self) -> None:
        """Let go of the slot (once); the last holder in this process removes the file, then unlocks it."""
        with _guard:
            if self._released:
                return
            self._released = True
            lock = _held.get(self.path)
            if lock is None:
                return
            lock.holders -= 1
            if lock.holders:
                return
            del _held[self.path]
            if lock.fd >= 0:  # removed while still locked: a process that opened it meanwhile finds it gone
                with contextlib.suppress(OSError):
                    self.path.unlink()
                os.close(lock.fd)


def line_path(root: Path, line: str) -> Path:
    """The lock file of ``line`` (``lines.py``), named by a digest: a line id read from a save names no path."""
    digest = hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(root) / FOLDER / LINES / f"{digest}.lock"


def hold(root: Path, slot: str, game: str) -> OpenSlot | None:
    """Hold ``slot`` open for ``game`` (its line); None when another process holds it.

    Raises:
        OSError: the lock file cannot be made (a read-only data folder); nothing is held.
    """
    return _hold(lock_path(root, slot), slot, game)


def hold_line(root: Path, line: str) -> OpenSlot | None:
    """Hold ``line`` for the game that goes on on it (``engine/lines.py``: no two windows play one line on); None
    when another process holds it.

    Raises:
        OSError: the lock file cannot be made; nothing is held.
    """
    return _hold(line_path(root, line), "", line)


def _hold(path: Path, slot: str, game: str) -> OpenSlot | None:
    with _guard:
        lock = _held.get(path)
        if lock is not None:
            lock.holders += 1
        else:
            fd = _take(path)
            if fd is None:
                return None
            _held[path] = _Lock(fd)
    opened = OpenSlot(path, slot)
    opened.record(game)
    return opened


def held_elsewhere(root: Path, slot: str) -> str | None:
    """The game (its line) another process plays in ``slot`` ("" when its lock file does not say yet); None when no
    other process holds the slot (nobody, or this process)."""
    return _held_elsewhere(lock_path(root, slot))


def line_held_elsewhere(root: Path, line: str) -> bool:
    """Whether another process plays on ``line`` (:func:`hold_line`)."""
    return _held_elsewhere(line_path(root, line)) is not None


def _held_elsewhere(path: Path) -> str | None:
    if sys.platform == "win32":
        return None
    with _guard:  # this process's own lock is never mistaken for another's, nor taken while it is looked at
        if path in _held:
            return None
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return os.pread(fd, 200, 0).decode("utf-8", "replace").partition("\n")[0].strip()
            return None
        finally:
            os.close(fd)  # and with it, the shared lock just taken


def _take(path: Path) -> int | None:
    """An open descriptor of ``path`` locked by this process (-1 where there is no ``flock``); None when another
    process holds it. Called with ``_guard`` held."""
    if sys.platform == "win32":
        return -1
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(TRIES):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            time.sleep(TRY_PAUSE_S)
            continue
        except OSError:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)  # its last holder removed it after it was opened here: lock the file there now
    return None
