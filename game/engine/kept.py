"""Which slot a game saves to, so that no game is lost to another: a new game, or a save of another game loaded
in place of the one in play, never overwrites the game its story's autosave holds.

The TUI and ``storyecho play`` save every game of a story to one slot, ``autosave-<story>``. A new game
(:func:`start_fresh`) and a loaded save of another game (:func:`continue_in`) first set the game in that slot
aside in a slot of its own, ``<autosave>-previous-<n>`` (``SlotStore.set_aside``). A save of the same game (any
line of it: a quick save, a branch, ``saves/lines.py``) loaded to go back in it plays on in the autosave, which
:func:`write_own` writes over only when it holds an earlier moment of the game's line (or of a line it went on
from); else the game goes on in a slot of its own.

Neither sets aside nor plays in a slot another window holds (``window.py``, issue 43, item 2): a new game then
saves to a slot of its own, and a loaded one goes on in one.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol

from game.engine.pipeline import TurnPipeline
from game.engine.timeline import Timeline
from game.engine.window import Opening, branch_off, go_apart, hold_slot, open_here
from game.memory.export import StateEncoder
from game.saves.format import SaveError, encode
from game.saves.lines import game_of, new_line
from game.saves.pruning import Written, covered, prune, reusable
from game.saves.slots import SlotStore


class Playing(Opening, Protocol):
    """What of a game in play the choice of its slot reads and sets (a :class:`~game.engine.session.GameSession`)."""


def start_fresh(session: Playing, autosave: str, how_to_load: str, *, what: str = "A new game.") -> list[str]:
    """A new game never overwrites an old one: the session autosaves to ``autosave``, whose last game is first set
    aside in a slot of its own, ``<autosave>-previous-<n>`` (``SlotStore.set_aside``: the save that reads, slot or
    backup, copied to a slot no game has, read back before anything is deleted; a game with no turns is not kept).
    When it cannot be set aside, or another window plays in it (issue 43: a second window's new game set the first
    window's game aside), the new game saves to a slot of its own and the last one stays where it is. The TUI and
    ``storyecho play`` both start a new game through here. Saves set aside by older versions, in
    ``<autosave>-previous``, are left as they are.

    Args:
        how_to_load: how the player loads a slot, told after its name; ``{slot}`` in it becomes the slot's name.
        what: what the player is told first (the game in play is a new one, or one loaded).

    Returns:
        What the player should be told.
    """
    session.slot = autosave
    slots = session.slots
    if slots is None:
        return []
    if hold_slot(session) is not None:  # held first: no other window starts playing in it while it is set aside
        session.slot = f"{autosave}-{session.line}"
        told = [
            f"{what} The game in slot {autosave!r} is open in another window and stays as it is; "
            f"this game saves to {session.slot!r}."
        ]
    else:
        told = _set_aside(session, slots, autosave, how_to_load, what)
    return told + open_here(session)


def _set_aside(session: Playing, slots: SlotStore, autosave: str, how_to_load: str, what: str) -> list[str]:
    """Set the last game in ``autosave`` aside for :func:`start_fresh` (the slot is held by this window)."""
    if not slots.exists(autosave):
        return []
    try:
        kept = slots.set_aside(autosave, f"{autosave}-previous")
    except SaveError as exc:
        session.slot = f"{autosave}-{session.line}"
        return [
            f"{what} Your last one could not be set aside ({exc}); it stays in slot {autosave!r}, "
            f"and this game saves to {session.slot!r}."
        ]
    if kept is None:  # the last game had no turns: nothing to go back to
        return []
    return [f"{what} Your last one is kept in slot {kept!r} ({how_to_load.replace('{slot}', kept)})."]


def continue_in(session: Playing, autosave: str, loaded: str, how_to_load: str) -> list[str]:
    """The game just loaded from slot ``loaded`` saves to ``autosave`` from now on. When ``autosave`` holds another
    game (another session, or a slot that does not read), that game is first set aside as :func:`start_fresh` sets
    it aside; the game loaded itself, or an earlier or later moment of it, is saved over (going back in a game).
    When another window plays in ``autosave``, the game goes on in a new slot of its own (:func:`open_here`).

    Returns:
        What the player should be told.
    """
    session.slot = autosave
    slots = session.slots
    if slots is None or loaded == autosave or not slots.exists(autosave):
        return open_here(session)
    other = hold_slot(session)
    if other is not None:  # another window plays there: never set aside, never written here
        return go_apart(session, other)
    if slots.game_of(autosave) == session.game_id:  # the same game, any line: going back in it (``write_own``
        return []  # then writes over an earlier moment of its line only, else goes on in a slot of its own)
    return start_fresh(session, autosave, how_to_load, what=f"Loaded {loaded!r}.")  # another, or one unread


def go_on(session: Playing, autosave: str, loaded: str | None, how_to_load: str, *, branch: bool = False) -> list[str]:
    """Where a game just built plays on: a new game (``loaded`` None) as :func:`start_fresh`, a loaded one as
    :func:`continue_in`, or, when the player chose it for a game open in another window, as a branch of its own
    (``window.branch_off``, a new slot ``<autosave>-<n>``).

    Raises:
        SaveError: the branch could not be written; the game has no slot of its own.
    """
    if branch:
        return [branch_off(session, autosave)]
    if loaded is None:
        return start_fresh(session, autosave, how_to_load)
    return continue_in(session, autosave, loaded, how_to_load)


def write_own(
    slots: SlotStore, slot: str, data: bytes, written: Written, wrote: tuple[str, str, int] | None
) -> tuple[str, Path, str | None]:
    """Write the game in play (``written``: its line, turn and history's reach) to its own slot, over nothing but an
    earlier (or the same) moment of its line or of a line it went on from (``written.ancestors``: each line and the
    last turn of it in the game's history), which the moment written carries in its history (a line never holds two
    moments at one turn: ``saves/lines.py``), or what this session wrote there last itself (``wrote``: the slot, line
    and turn; undo and retry go back over the session's own moments, as they always did). When the slot holds
    anything else, the game goes on in a numbered slot of its own: one of the game's own ``<slot>-<n>`` whose moments
    its history holds (``pruning.reusable``), else a new one (issue 43: a branch loaded and played on wrote over the
    main line's turn 20; two windows of one story wrote over each other's game). Then the game's other numbered slots
    that its history holds are removed (``pruning.prune``: they piled up, one a Continue).

    Returns:
        The slot written, its path, and what the player should be told (a new slot, slots removed; else None).

    Raises:
        SaveError: the write failed; nothing was replaced.
    """
    held = slots.moment_of(slot)
    own = replace(written, first=-1)  # the slot's own earlier moment is replaced as it always was, reach or not
    if held is None or covered(held, own) or wrote == (slot, *held):
        path = slots.write(slot, data)
        return slot, path, _pruned(slots, slot, written)
    other, later = held
    kept = f"turn {later} of this game" if game_of(other) == game_of(written.line) else "another game"
    new = reusable(slots, slot, written)
    if new is not None:
        path = slots.write(new, data)
    else:
        new = slots.claim(slot, data)
        path = slots.path(new)
    told = f"Slot {slot!r} holds {kept}, which stays as it is: this game goes on in slot {new!r}."
    return new, path, " ".join(filter(None, [told, _pruned(slots, new, written)]))


def _pruned(slots: SlotStore, slot: str, written: Written) -> str | None:
    """Remove the game's numbered slots that ``written`` (just written to ``slot``) holds in its history, and say so."""
    removed = prune(slots, slot, written)
    if not removed:
        return None
    names = ", ".join(repr(name) for name in removed)
    return f"No longer needed, as this save holds their turns: slot{'s' if len(removed) > 1 else ''} {names}, removed."


def quick_kept(slots: SlotStore, quick: str, line: str, turn: int) -> str:
    """Before a quick save of the game on ``line`` at ``turn`` to ``quick``: when the slot holds another game's quick
    save, or a later turn of this game (another window played on from it), set it aside in a slot of its own
    (``<quick>-previous-<n>``) and say where (issue 43: F5 replaced another game's quick save without a word, and
    turn 0 of a game over its turn 1); "" when there is nothing to keep.

    Raises:
        SaveError: what the quick slot holds could not be set aside; nothing was written.
    """
    held = slots.moment_of(quick) if slots.exists(quick) else None
    if held is None or (held[0] == line and held[1] <= turn):
        return ""
    kept = slots.set_aside(quick, f"{quick}-previous")
    if not kept:
        return ""
    same = game_of(held[0]) == game_of(line)
    what = f"turn {held[1]} of this game" if same else f"your other game (turn {held[1]})"
    return f" The quick save of {what} is kept in slot {kept!r}."


def replace_question(slots: SlotStore, name: str, line: str, turn: int) -> str | None:
    """What to ask before ``save NAME`` replaces slot ``name`` (issue 43: a slot the player names is replaced only
    after a question): when it holds another game, or a later moment of this one; None when nothing would be lost
    (no such slot, or this game at this turn or before)."""
    if not slots.exists(name):
        return None
    held = slots.moment_of(name)
    if held is not None and held[0] == line and held[1] <= turn:
        return None
    if held is None:
        what = "a save that does not read"
    elif game_of(held[0]) != game_of(line):
        what = f"another game (turn {held[1]})"
    elif held[0] != line:
        what = f"turn {held[1]} of another line of this game (a branch, or a moment gone back from)"
    else:
        what = f"turn {held[1]} of this game"
    return f"Slot {name!r} holds {what}. Type 'save {name}' again to replace it, or save under another name."


class Branching(Protocol):
    """What of a game in play a branch of it reads (a :class:`~game.engine.session.GameSession`)."""

    engine: TurnPipeline
    timeline: Timeline

    def wait_for_autosave(self) -> None:
        """Wait until the autosave under way (if any) is written."""
        ...


def branch_at(session: Branching, store: SlotStore, turn: int, name: str) -> str:
    """Save the game as it was after ``turn`` (a turn of the session's timeline) to a new slot ``name``, on a new line
    (``saves/lines.py``: loaded and played on, it never writes over the game's own later turns); returns what to
    tell the player.

    Raises:
        SaveError: no such turn in the timeline, a bad or taken slot name, a failed write.
    """
    store.path(name)
    if store.exists(name):
        raise SaveError(f"there is already a save named {name!r}; pick another name")
    moment = session.timeline.at(turn)
    if moment is None:
        first, last = session.timeline.moments[0].turn, session.timeline.now.turn
        raise SaveError(f"this session holds turns {first} to {last}, not turn {turn}")
    memory = StateEncoder().encode_parted(moment.memory)  # in the parts the game's saves share (``parted.py``)
    history = session.timeline.saved(upto=turn)
    game, pack = moment.memory.session_id, session.engine.pack
    data = encode(pack, moment.game, memory, session_id=game, line=new_line(game), history=history)
    session.wait_for_autosave()
    store.write(name, data)
    return f"Branched turn {turn} to {name!r}: load it to play on from there. This game goes on."
