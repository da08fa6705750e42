"""Going back in the game in play: ``undo``, ``redo`` and ``retry`` over the session's timeline (``timeline.py``).

``undo`` takes the last turn back (world state, memory and the autosave as they were before it), ``redo`` plays an
undone turn forward again without asking the narrator, ``retry`` asks the narrator again for the last action from
the state and memory before it (another telling: ``PromptBundle.attempt``). Undo and retry go on as a new line
(``engine/lines.py``): the turns taken back may stay in other slots. :class:`Rewinding` is the part of
:class:`~game.engine.session.GameSession` that does it.
"""

from __future__ import annotations

from collections.abc import Callable

from game.engine import lines
from game.engine.pipeline import TurnPipeline
from game.engine.results import TurnResult
from game.engine.timeline import Moment, Timeline
from game.language.parser import Command
from game.saves.slots import SlotStore
from game.saves.windows import OpenSlot
from game.text import clip

REWIND_VERBS = ("undo", "redo", "retry")


class RewindError(Exception):
    """Nothing to undo, redo or retry; the message says why, in words."""


class Rewinding:
    """Undo, redo and retry, for the session that has the attributes and methods declared here."""

    engine: TurnPipeline
    slots: SlotStore | None
    slot: str
    line: str
    line_held: OpenSlot | None
    ancestors: dict[str, int]
    autosave_every: int
    timeline: Timeline
    history: list[TurnResult]
    _retrying: Moment | None
    under_way: str | None
    _begin: Callable[[], None]
    _committed: Callable[[TurnResult, int], None]
    _kept: Callable[[TurnResult], None]
    _told: Callable[[Command, str, bool], TurnResult]
    autosave: Callable[[], None]
    wait_for_autosave: Callable[[], None]

    def _return_to(self, moment: Moment, *, autosave: bool = True) -> None:
        """Put the game and memory back as they were at ``moment`` (and the autosave, with ``autosave``)."""
        self.wait_for_autosave()
        self.engine.memory.restore(moment.memory.thawed())
        self.engine.state = moment.game.snapshot()
        if autosave and self.autosave_every and self.slots is not None:
            self.autosave()  # the slot holds the game as it is now, never an undone turn

    def _forget(self, moment: Moment) -> None:
        """Drop the result of the turn that led to ``moment`` from :attr:`history` (it was undone or retold)."""
        self.history = [r for r in self.history if r.state is not moment.game]

    def undo(self) -> str:
        """Take the last turn back; returns what to tell the player.

        Raises:
            RewindError: no turn of this session to take back.
        """
        self._begin()
        if not self.timeline.can_undo:
            raise RewindError(f"Nothing to undo: this session starts at turn {self.timeline.now.turn}.")
        undone = self.timeline.now
        now = self.timeline.back()
        self.wait_for_autosave()
        lines.fork(self, now.turn)  # the turns undone may stay in other slots: the game goes on as a line of its own
        self._return_to(now)
        self._forget(undone)
        return (
            f"Undone: turn {undone.turn} ({undone.action}). Back at turn {now.turn}{_at(now)}. 'redo' plays it again."
        )

    def redo(self) -> str:
        """Play the last undone turn forward again, as it was told (no narrator call).

        Raises:
            RewindError: no undone turn to play again.
        """
        self._begin()
        if not self.timeline.can_redo:
            raise RewindError("Nothing to redo.")
        now = self.timeline.forward()
        self._return_to(now)
        return f"Redone: turn {now.turn} ({now.action}).\n{now.narration}"

    def retry(self) -> TurnResult:
        """Ask the narrator again for the last turn's action, from the state and memory before it.

        The new telling replaces the last one everywhere (game, memory, autosave, :attr:`history`); when it
        fails, the last telling stands. Until it is in, the last telling is the game: a quit keeps it, and asks
        first (:attr:`under_way`; issue 43, item 5).

        Raises:
            RewindError: no turn of this session to tell again.
        """
        self._begin()
        if not self.timeline.can_undo:
            raise RewindError("Nothing to retry: no turn played in this session yet.")
        told = self.timeline.now
        self._retrying = told  # until the new telling is in, the last one is the game (a quit keeps it)
        self.under_way = f"turn {told.turn} again ({clip(told.action, 60)})"
        before = self.timeline.back()
        self._return_to(before, autosave=False)
        attempt = told.attempt + 1
        try:
            result = self.engine.play(told.action, attempt=attempt)
        finally:
            self._retrying = self.under_way = None
        if not (result.ok and self.engine.state.turn == before.turn + 1):
            self.history.append(result)
            self._return_to(self.timeline.forward(), autosave=False)
            message = f"{result.error or 'The turn could not be told again.'} The last telling stands."
            result.narration, result.error, result.ok = message, message, False
            return result
        lines.fork(self, before.turn)  # as undo: the telling replaced may stay in other slots
        self._forget(told)
        self._kept(result)
        self._committed(result, attempt)
        if self.autosave_every and self.slots is not None:
            self.autosave()
        return result

    def _rewind_command(self, command: Command) -> TurnResult:
        try:
            if command.verb == "retry":
                return self.retry()
            message, ok = (self.undo() if command.verb == "undo" else self.redo()), True
        except RewindError as exc:
            message, ok = str(exc), False
        return self._told(command, message, ok)


def _at(moment: Moment) -> str:
    return f", {moment.place}" if moment.place else ""
