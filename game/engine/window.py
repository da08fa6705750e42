"""The window a game is open in (issue 43, item 2): a game in play holds the slot it saves to, so that a second
window on the same data folder knows before it loads that game, and neither window ever writes the other's slot.

A front end marks the game open once its slot is settled (:func:`open_here`; ``kept.start_fresh`` and
``kept.continue_in`` do it too): the session holds ``saves/windows.py``'s lock on that slot, follows the game when
it goes on in a new slot (:func:`follow`, after ``kept.write_own`` moved it) and lets go when it closes
(:func:`let_go`). A window that would load a game open in another (:func:`open_elsewhere`) tells the player and
offers a branch: the game goes on as a branch of its own (:func:`branch_off`: a new slot ``<slot>-<n>``, claimed as
``kept.write_own`` claims one), or nothing happens. A game whose slot is found held anyway (``storyecho run
--slot``, or a window that opened it a moment ago) goes on as a branch without a question.
"""

from __future__ import annotations

import logging
from typing import Protocol

from game.engine.lines import OnLine, fork, keep
from game.engine.pipeline import TurnPipeline
from game.saves.format import SaveError, SlotKind
from game.saves.lines import game_of
from game.saves.slots import SlotStore
from game.saves.windows import OpenSlot, held_elsewhere, hold

log = logging.getLogger("storyecho.session")

AUTOSAVE_KIND = "autosave"
"""Slots named so hold autosaves (``session.AUTOSAVE_SLOT``, which this module cannot import)."""
OPEN_ELSEWHERE = "This game is open in another window."
BRANCH_OFFER = "Play it here as a branch of its own, in a new slot? The other window's game stays as it is."


class Opening(OnLine, Protocol):
    """What of a game in play its window reads and sets (a :class:`~game.engine.session.GameSession`)."""

    engine: TurnPipeline

    slot: str
    slots: SlotStore | None
    opened: OpenSlot | None
    """The slot the game is open in, in this window (:func:`open_here`)."""

    @property
    def game_id(self) -> str:
        """The game's own id (its memory's session id), which every save of it carries."""
        ...

    def snapshot(self, *, kind: SlotKind = "manual", complete: bool = True) -> bytes:
        """The bytes of a save of the game as it stands."""
        ...

    def wait_for_autosave(self) -> None:
        """Wait until the autosave under way (if any) is written."""
        ...


def open_elsewhere(slots: SlotStore, name: str, autosave: str) -> bool:
    """Whether the game in slot ``name`` is open in another window (issue 43, item 2): another StoryEcho holds that
    slot, or holds ``autosave`` (where this window would play it on) with this same game. A front end asks before
    it loads such a game: go on as a branch of its own (:func:`branch_off`), or cancel.

    Raises:
        SaveError: ``name`` or ``autosave`` is not a slot name.
    """
    if held_elsewhere(slots.root, name) is not None:
        return True
    if autosave == name:
        return False
    there = held_elsewhere(slots.root, autosave)
    return there is not None and there == slots.line_of(name)


def load_question(slots: SlotStore, name: str, slot: str) -> str | None:
    """What to ask before a typed ``load NAME`` loads a game open in another window (this window plays in
    ``slot``); None when it is not. The same command again goes on as a branch; anything else cancels."""
    if not open_elsewhere(slots, name, slot):
        return None
    return (
        f"{OPEN_ELSEWHERE} Type 'load {name}' again to play it here as a branch of its own, in a new slot (the "
        "other window's game stays as it is); anything else keeps your game as it is."
    )


def open_here(session: Opening) -> list[str]:
    """Mark the game in play as open in this window: hold the slot it saves to (``saves/windows.py``), so that a
    window that would load it is told (issue 43, item 2). When another window holds that slot already, the game
    goes on in a new slot of its own and never writes there. Idempotent: a front end calls it once the game's slot
    is settled, and ``kept.start_fresh`` and ``kept.continue_in`` call it.

    Returns:
        What the player should be told.
    """
    other = hold_slot(session)
    return [] if other is None else go_apart(session, other)


def branch_off(session: Opening, prefix: str) -> str:
    """Go on with the game in play as a branch of its own (issue 43, item 2: the answer to "this game is open in
    another window"): written at once to a new slot ``<prefix>-<n>`` (``SlotStore.claim``, as ``kept.write_own``
    goes on in one), then played on and held there. The other window's slot is never written.

    Returns:
        What the player should be told.

    Raises:
        SaveError: no new slot could be written; the game is where it was.
    """
    slots = session.slots
    if slots is None:
        raise SaveError("this game is played without saves")
    session.wait_for_autosave()
    fork(session, session.engine.state.turn)  # a line of its own, held from now on: the other window's stays
    keep(session)
    kind: SlotKind = "autosave" if prefix.startswith(AUTOSAVE_KIND) else "manual"  # as the session's own writes
    session.slot = slots.claim(prefix, session.snapshot(kind=kind, complete=False))
    hold_slot(session)
    return (
        f"{OPEN_ELSEWHERE} This window plays it on as a branch of its own, in slot {session.slot!r}; "
        "the other window's game stays as it is."
    )


def follow(session: Opening) -> None:
    """After the game went on in a new slot (``kept.write_own``): hold that one instead, in a window that held one."""
    opened = session.opened
    if opened is not None and opened.slot != session.slot:
        hold_slot(session)


def let_go(session: Opening) -> None:
    """The game leaves its window (closed, or another loaded in its place): its slot is no longer held."""
    opened, session.opened = session.opened, None
    if opened is not None:
        opened.release()


def hold_slot(session: Opening) -> str | None:
    """Hold the session's slot for its game, letting go of the one held before: None once held (or when it cannot
    be marked, a read-only folder: ``kept.write_own`` still guards), else the game another window plays there ("" when
    its lock does not say)."""
    slots = session.slots
    if slots is None:
        return None
    opened = session.opened
    if opened is not None and opened.slot == session.slot:
        opened.record(session.line)
        return None
    let_go(session)
    try:
        session.opened = hold(slots.root, session.slot, session.line)
    except (OSError, SaveError) as exc:
        log.warning("slot %r cannot be marked open in this window: %s", session.slot, exc)
        return None
    if session.opened is not None:
        return None
    return held_elsewhere(slots.root, session.slot) or ""


def go_apart(session: Opening, other: str) -> list[str]:
    """The game goes on in a slot of its own, its slot being held by another window that plays ``other``."""
    held, same = session.slot, game_of(other) == game_of(session.line)
    try:
        told = branch_off(session, held)
    except SaveError as exc:
        return [f"Slot {held!r} is open in another window, and this game could not go on in a slot of its own: {exc}."]
    if same:
        return [told]
    return [
        f"Slot {held!r} is open in another window, with another game, which stays as it is: "
        f"this game saves to {session.slot!r}."
    ]
