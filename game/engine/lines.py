"""The line a game in play goes on on (``saves/lines.py``, issue 43, item 1): the one it was loaded on when the moment
loaded is that line's latest and no other window plays on it, else a new one, and the player is told.

A session holds its line (``saves/windows.py``'s lock, ``.open/lines/``) from the load that goes on on it, or a new
line from its first write, for as long as it plays on it, so that two windows never both go on on one line: the
second goes on as a new line. It lets go when it closes or moves to
another line (a load, a branch of its own, undo and retry).
"""

from __future__ import annotations

import logging
from typing import Protocol

from game.saves.format import SaveFile
from game.saves.lines import new_line
from game.saves.slots import SlotStore
from game.saves.windows import OpenSlot, held_elsewhere, hold_line

log = logging.getLogger("storyecho.session")

AS_A_NEW_LINE = "it goes on here as a new line"
"""In every sentence that tells the player a loaded game goes on as a new line (``storyecho run --json`` finds it)."""


class OnLine(Protocol):
    """What of a game in play its line reads and sets (a :class:`~game.engine.session.GameSession`)."""

    slots: SlotStore | None
    slot: str
    line: str
    """The line the game goes on on: every save of it carries it."""
    line_held: OpenSlot | None
    """The hold on :attr:`line` in this window (None: not held, or played without saves)."""
    ancestors: dict[str, int]
    """The lines this game went on from, each with the last turn of it the game's history holds (``kept.write_own``
    replaces those moments too: each is in the history of the moment written)."""


def take(session: OnLine, line: str) -> bool:
    """Go on on ``line``, holding it; False (and nothing changed) when another window plays on it."""
    slots = session.slots
    held: OpenSlot | None = None
    if slots is not None:
        try:
            held = hold_line(slots.root, line)
        except OSError as exc:  # a read-only folder: nothing is written there either (``kept.write_own`` guards)
            log.warning("line %s cannot be held in this window: %s", line, exc)
        else:
            if held is None:
                return False
    before, session.line_held, session.line = session.line_held, held, line
    if before is not None and before is not held:
        before.release()
    return True


def fork(session: OnLine, at: int | None) -> str:
    """Go on on a new line (no save is on it yet: it is held from its first write, :func:`keep`) from turn ``at`` of
    the line the game is on (None: none of its moments is the game's to replace); returns the new line."""
    if at is not None:
        session.ancestors = {line: min(turn, at) for line, turn in session.ancestors.items()}
        session.ancestors[session.line] = at
    let_go(session)
    session.line = new_line(session.line)
    return session.line


def keep(session: OnLine) -> None:
    """Before the game is written: hold its line, unless it is held (a line is held from its first write, or from
    the load that goes on on it). Should another window have taken it meanwhile, the game goes on on a new one."""
    if session.line_held is None and session.slots is not None and not take(session, session.line):
        take(session, fork(session, None))


def go_on_from(session: OnLine, save: SaveFile) -> list[str]:
    """The line the game just loaded from ``save`` goes on on: its own when ``save`` holds that line's latest moment
    (no slot holds a later turn of it) and no other window plays on it; else a new line, and the player is told in
    one sentence (issue 43: a loaded branch or older moment went on on its game's line and wrote over its later
    turns), unless the window says it (the slot itself is open in another window: ``window.open_here``)."""
    slots = session.slots
    let_go(session)
    session.line, session.ancestors = save.session_id, {}
    latest = slots.latest_of(session.line) if slots is not None else None
    if latest is not None and latest[1] > save.turn:
        fork(session, save.turn)
        return [
            f"Turn {save.turn} is an earlier moment of a game that went on to turn {latest[1]} (slot "
            f"{latest[0]!r}): {AS_A_NEW_LINE}, and those turns stay where they are."
        ]
    if take(session, session.line):
        return []
    fork(session, save.turn)
    if slots is not None and held_elsewhere(slots.root, session.slot) is not None:
        return []
    return [f"This game is open in another window: {AS_A_NEW_LINE}, and that window's game stays as it is."]


def let_go(session: OnLine) -> None:
    """The game leaves its window, or its line: the line is no longer held."""
    held, session.line_held = session.line_held, None
    if held is not None:
        held.release()
