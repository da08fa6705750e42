"""What the Textual game asks before it loads a slot (F3, F9, the title's Continue), so that a load never costs the
player anything without their word.

- The game in the slot is open in another window (issue 43, item 2: two windows of one game wrote over each
  other's moments): it is said plainly, and the player plays it here as a branch of its own, in a new slot
  (``window.branch_off``; the other window's slot is never written), or cancels and is where they were.
- The game in play has progress not saved yet: load, or keep playing (as quitting asks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from game.tui.confirm import ConfirmScreen

if TYPE_CHECKING:
    from game.engine.session import GameSession
    from game.saves.slots import SlotStore

Load = Callable[[str, bool], None]
"""Loads a slot (its name; True: as a branch of its own)."""


def ask_before_loading(
    app: App[Any], slots: SlotStore, name: str, load: Load, playing: GameSession | None = None, saved: int = 0
) -> None:
    """Load slot ``name`` (``load``) once the player has answered what must be asked first: whether to play its
    game here as a branch of its own when it is open in another window, then, when the game ``playing`` has
    progress since turn ``saved`` not saved yet, whether to load at all (as quitting asks). Either No loads nothing
    and writes nothing: the player is where they were."""

    def then(branch: bool) -> None:
        if playing is None or playing.engine.state.turn == saved:
            load(name, branch)
            return
        title = playing.engine.pack.story.title
        message = f"Load {name!r}? Your game of {title} {unsaved(playing.engine.state.turn, saved)}."
        app.push_screen(
            ConfirmScreen(message, yes="Load", no="Keep playing"), lambda yes: load(name, branch) if yes else None
        )

    if not open_elsewhere(slots, name):
        then(False)
        return
    from game.engine.window import BRANCH_OFFER, OPEN_ELSEWHERE

    question = ConfirmScreen(f"{OPEN_ELSEWHERE} {BRANCH_OFFER}", yes="Play a branch", no="Cancel")
    app.push_screen(question, lambda yes: then(True) if yes else None)


def unsaved(turn: int, saved: int) -> str:
    """What a game at ``turn`` holds that its last save (of turn ``saved``) does not, as the end of "Your game ...":
    a game taken back before its save has no progress since it (issue 46: "progress since turn 8" at turn 7)."""
    if turn < saved:
        return f"is back at turn {turn}, and your last save is of turn {saved}"
    return f"has progress since turn {saved} that you have not saved"


def open_elsewhere(slots: SlotStore, name: str) -> bool:
    """Whether the game in slot ``name`` is open in another window, where it would go on here (its story's
    autosave) or in the slot itself (``window.open_elsewhere``); headers and lock files only, no game is read."""
    from game.engine.window import AUTOSAVE_KIND
    from game.engine.window import open_elsewhere as elsewhere
    from game.saves.format import SaveError

    info = slots.info(name)
    if info.error:
        return False  # the load says why it cannot be loaded
    try:
        return elsewhere(slots, name, f"{AUTOSAVE_KIND}-{info.story_id}")
    except (SaveError, OSError):
        return False
