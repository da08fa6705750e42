"""The session's turns as moments it can return to: undo, redo, retry and branches.

A :class:`Moment` is the game as it stood after a turn: the committed game state (the engine replaces it each
turn and never changes it, so a moment keeps it as is) and memory's frozen state (``MemoryState.frozen``: it
shares the logged episodes, the summaries and the Story Bible entries unchanged since the last one, so a moment
costs a pointer per episode and entry). :class:`Timeline` keeps the moments of this session, from the one it
started at (a new game, a load) to the last turn played, and where the game is among them: undo steps back,
redo forward, and playing a turn after an undo drops the turns that were undone. It also keeps the game's
history as saves hold it (``saves/history.py``), in step with the moment the game is at.

Memory is returned to a moment the way a load returns it to a save (``Memory.restore``): its indexes are rebuilt
from the moment's state, so nothing recorded after it can be recalled, and a consolidation still running for the
state left behind discards its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from game.memory.records import Episode, MemoryState
from game.saves.history import GameHistory, HistoryError
from game.world.state import GameState

LINE_CHARS = 120


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
        """The narration's first line, cut to :data:`LINE_CHARS` (the timeline screen's summary of the turn)."""
        first = self.narration.strip().split("\n", 1)[0]
        return first if len(first) <= LINE_CHARS else first[: LINE_CHARS - 1].rstrip() + "…"


class Timeline:
    """This session's moments, oldest first, which one the game is at, and the game's history up to it."""

    def __init__(self) -> None:
        self.moments: list[Moment] = []
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
        told = _episode(saved, moment.turn)
        if not moment.game.ending or told is None or eve < history.first:
            self.start(moment, history)
            return
        try:
            game = history.state_at(eve)
        except HistoryError:
            self.start(moment, history)
            return
        before = _episode(saved, eve)
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
        """The game state after each turn up to :attr:`now`, as saves keep it."""
        if self._history is None:
            raise RuntimeError("the timeline has not started")
        return self._history

    @property
    def started(self) -> bool:
        return bool(self.moments)

    @property
    def now(self) -> Moment:
        return self.moments[self.position]

    def record(self, moment: Moment) -> None:
        """A turn was played from the moment the game is at: the turns undone after it are gone."""
        del self.moments[self.position + 1 :]
        self.history.record(self.now.game, moment.game)
        self.moments.append(moment)
        self.position += 1

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
        self.history.cut(self.now.turn)
        return self.now

    def forward(self) -> Moment:
        """Step forward one undone turn; returns the moment to return to."""
        if not self.can_redo:
            raise IndexError("nothing to redo")
        self.position += 1
        self.history.record(self.moments[self.position - 1].game, self.now.game)
        return self.now

    def played(self) -> list[Moment]:
        """The moments up to where the game is (the turns a branch may start from), oldest first."""
        return self.moments[: self.position + 1]

    def at(self, turn: int) -> Moment | None:
        """The moment of ``turn`` among :meth:`played`."""
        return next((m for m in self.played() if m.turn == turn), None)


def _episode(memory: MemoryState, turn: int) -> Episode | None:
    """The logged episode of the turn ``turn`` played (its action and narration)."""
    return next((e for e in reversed(memory.log) if e.action and e.turn == turn), None)
