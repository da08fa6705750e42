"""The session's turns as moments it can return to: undo, redo, retry and branches.

A :class:`Moment` is the game as it stood after a turn: the committed game state (the engine replaces it each
turn and never changes it, so a moment keeps it as is) and memory's frozen state (``MemoryState.frozen``: it
shares the logged episodes, the summaries and the Story Bible entries unchanged since the last one, so a moment
costs a pointer per episode and entry). :class:`Timeline` keeps the moments of this session, from the one it
started at (a new game, a load) to the last turn played, and where the game is among them: undo steps back,
redo forward, and playing a turn after an undo drops the turns that were undone. It also keeps the game's
history as saves hold it (``saves/history.py``), up to the last moment (the turns undone and not yet dropped
among them, so redo finds them); a save takes it up to the moment the game is at (:meth:`Timeline.saved`).

Undo reaches back to where the session started, however long ago. Only the last :data:`FULL_MOMENTS` moments
(and the one the game is at) are kept whole: an older one is compacted to :class:`Compacted` (its turn, action,
place and first line: what the timeline screen lists), and rebuilt when the game returns to it or a branch is
made of it, the way a branch of a saved game is (``storyecho slots branch``): the game state from the history,
memory as of its turn (``MemoryState.as_of``, the one definition of "memory as of turn N") of the next whole
moment, the narration from that memory's log. Pointers per episode in every moment made a 2,000-turn session
keep +73 MB (issue 33); compacted, the timeline keeps ~200 bytes per older turn.

Memory is returned to a moment the way a load returns it to a save (``Memory.restore``): its indexes are rebuilt
from the moment's state, so nothing recorded after it can be recalled, and a consolidation still running for the
state left behind discards its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from game.memory.records import MemoryState
from game.saves.history import GameHistory, HistoryError
from game.world.state import GameState

LINE_CHARS = 120
FULL_MOMENTS = 50
"""Moments kept whole, the last ones (older ones are :class:`Compacted` until the game returns to them)."""


def first_line(narration: str) -> str:
    """The narration's first line, cut to :data:`LINE_CHARS` (the timeline screen's summary of the turn)."""
    first = narration.strip().split("\n", 1)[0]
    return first if len(first) <= LINE_CHARS else first[: LINE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class Moment:
    """The game as it stood after one turn (or where the session started)."""

    game: GameState
    memory: MemoryState
    """Frozen: :meth:`MemoryState.thawed` gives a copy to play on."""
    action: str = ""
    """The action of the turn that led here ("" where the session started)."""
    place: str = ""
    narration: str = ""
    attempt: int = 0
    """How many times this turn was retried (a narrator samples each telling with its own seed)."""

    @property
    def turn(self) -> int:
        return self.game.turn

    @property
    def line(self) -> str:
        return first_line(self.narration)

    def compacted(self) -> Compacted:
        return Compacted(self.turn, self.action, self.place, self.line, self.attempt)


@dataclass(frozen=True, slots=True)
class Compacted:
    """An older moment, kept small: what the timeline screen lists of it. :meth:`Timeline.whole` rebuilds it."""

    turn: int
    action: str
    place: str
    line: str
    attempt: int


class Timeline:
    """This session's moments, oldest first, which one the game is at, and the game's history up to the last."""

    def __init__(self) -> None:
        self.moments: list[Moment | Compacted] = []
        self.position = -1
        self._history: GameHistory | None = None

    def start(self, moment: Moment, history: GameHistory | None = None) -> None:
        """Begin again at ``moment`` (a new game or a load: undo reaches back to it and no further), with the
        ``history`` a loaded save carries (else one starting at ``moment``)."""
        self.moments, self.position = [moment], 0
        self._history = history or GameHistory(moment.game)

    def resume(self, moment: Moment, history: GameHistory, saved: MemoryState, places: Mapping[str, str]) -> None:
        """Begin at a loaded save's ``moment``; a game that has ended begins at the turn before its ending, with the
        ending after it, so that undo, retry and the timeline reach that turn as in the session that played it.

        That turn is rebuilt as a branch of the save is (``storyecho slots branch``): the state from the save's
        ``history``, memory as of the turn from ``saved`` (the save's memory state). A save whose history or
        log cannot give it (an older save: no history) begins at ``moment``, as any other save does.
        ``places`` names the places by id."""
        eve = moment.turn - 1
        told = saved.told(moment.turn)
        if not moment.game.ending or told is None or eve < history.first:
            self.start(moment, history)
            return
        try:
            game = history.state_at(eve)
        except HistoryError:
            self.start(moment, history)
            return
        before = saved.told(eve)
        history.cut(eve)
        self.start(
            Moment(
                game,
                saved.as_of(eve).frozen(),
                before.action if before else "",
                places.get(game.node, game.node),
                before.narration if before else "",
            ),
            history,
        )
        self.record(replace(moment, action=told.action, narration=told.narration))

    @property
    def history(self) -> GameHistory:
        """The game state after each turn up to the last moment (undone turns not yet dropped among them)."""
        if self._history is None:
            raise RuntimeError("the timeline has not started")
        return self._history

    def saved(self, upto: int | None = None) -> dict[str, Any]:
        """The game's history as a save writes it (``GameHistory.saved``, parted), up to the moment the game is at
        (or to ``upto``, not past it)."""
        now = self.now.turn
        return self.history.saved(upto=now if upto is None else min(upto, now), parted=True)

    @property
    def started(self) -> bool:
        return bool(self.moments)

    @property
    def now(self) -> Moment:
        return self.whole(self.position)

    def record(self, moment: Moment) -> None:
        """A turn was played from the moment the game is at: the turns undone after it are gone."""
        now = self.now
        del self.moments[self.position + 1 :]
        self.history.cut(now.turn)
        self.history.record(now.game, moment.game)
        self.moments.append(moment)
        self.position += 1
        self._compact(len(self.moments) - 1 - FULL_MOMENTS)

    @property
    def can_undo(self) -> bool:
        return self.position > 0

    @property
    def can_redo(self) -> bool:
        return 0 <= self.position < len(self.moments) - 1

    def back(self) -> Moment:
        """Step back one turn; returns the moment to return to."""
        if not self.can_undo:
            raise IndexError("nothing to undo")
        self.position -= 1
        self._compact(self.position + 1)
        return self.now

    def forward(self) -> Moment:
        """Step forward one undone turn; returns the moment to return to."""
        if not self.can_redo:
            raise IndexError("nothing to redo")
        self.position += 1
        self._compact(self.position - 1)
        return self.now

    def played(self) -> list[Moment | Compacted]:
        """The moments up to where the game is (the turns a branch may start from), oldest first."""
        return self.moments[: self.position + 1]

    def at(self, turn: int) -> Moment | None:
        """The moment of ``turn`` among :meth:`played`, whole."""
        index = next((i for i, m in enumerate(self.played()) if m.turn == turn), None)
        return None if index is None else self.whole(index)

    def whole(self, index: int) -> Moment:
        """The moment at ``index``, rebuilt if it was compacted (see the module docstring); the one the game is at is
        kept rebuilt."""
        moment = self.moments[index]
        if isinstance(moment, Moment):
            return moment
        source = next(m for m in self.moments[index + 1 :] if isinstance(m, Moment))  # the last one is always whole
        memory = source.memory.as_of(moment.turn)
        told = memory.told(moment.turn)
        whole = Moment(
            self.history.state_at(moment.turn),
            memory,
            moment.action,
            moment.place,
            told.narration if told is not None else moment.line,
            moment.attempt,
        )
        if index == self.position:
            self.moments[index] = whole
        return whole

    def _compact(self, index: int) -> None:
        """Compact the moment at ``index`` if it is older than the last :data:`FULL_MOMENTS` and the game is not
        at it."""
        if 0 <= index < len(self.moments) - FULL_MOMENTS and index != self.position:
            moment = self.moments[index]
            if isinstance(moment, Moment):
                self.moments[index] = moment.compacted()
