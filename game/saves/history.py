"""The game state after every turn, as a save keeps it: where a branch of a saved game starts.

A save holds the state the game started from (or the oldest one it knows: a save made before histories were
kept starts there) and, for each turn since, the fields of :class:`GameState` that turn changed. Most turns
change the turn, the clock and a field or two, so a turn costs ~100 bytes; each turn's change is encoded once,
when it is recorded, so a save of a long game encodes only the turns since the last one (``bench/saves.py``).
The changes are kept as that JSON, in one buffer (``PackedJson``): ~50 bytes a turn, not a ``bytes`` object
and a dict each (issue 33).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from game.memory.export import PackedJson
from game.memory.records import model_fields
from game.world.state import GameState

Field = Literal[tuple(GameState.model_fields)]  # type: ignore[valid-type]
Changes = dict[Field, Any]  # type: ignore[valid-type]
"""What one turn changed: the fields of the state after it that differ from the state before it (the turn
among them: every turn changes it)."""


class SavedHistory(BaseModel):
    """A save's ``history``: the state it starts from and what each turn since changed (keys checked on load;
    values when a branch is made of them, :meth:`GameHistory.state_at`)."""

    model_config = ConfigDict(extra="forbid")

    start: GameState
    turns: list[Changes] = []


class HistoryError(ValueError):
    """A turn the history cannot give (not in it, or its saved changes do not make a valid state)."""


class GameHistory:
    """The history of the game being played: :meth:`record` each committed turn, :meth:`cut` on undo."""

    def __init__(self, start: GameState, turns: list[dict[str, Any]] | None = None) -> None:
        self.start = start
        self._numbers = array("q")
        """The turn each kept change led to, ascending."""
        self._changes = PackedJson(sealed=True)
        for changed in turns or []:
            self._keep(changed["turn"], changed)
        self._start_json = orjson.Fragment(orjson.dumps(start, default=model_fields))

    def _keep(self, turn: int, changed: dict[str, Any]) -> None:
        self._changes.append(orjson.dumps(changed, default=model_fields))
        self._numbers.append(turn)

    @classmethod
    def of(cls, saved: SavedHistory | None, state: GameState) -> GameHistory:
        """The history a loaded save carries; one that starts at its state when it has none (an older save) or
        its turns do not follow one another up to the save's turn (a damaged history costs the branches, not the
        game)."""
        if saved is None:
            return cls(state)
        first = saved.start.turn
        if len(saved.turns) != state.turn - first or any(
            changed.get("turn") != first + number for number, changed in enumerate(saved.turns, 1)
        ):
            return cls(state)
        try:
            return cls(saved.start, saved.turns)
        except (TypeError, orjson.JSONEncodeError):  # a number JSON allows and the game cannot hold, say
            return cls(state)

    @property
    def first(self) -> int:
        return self.start.turn

    @property
    def last(self) -> int:
        return self._numbers[-1] if self._numbers else self.start.turn

    def record(self, before: GameState, after: GameState) -> None:
        """Keep what the turn from ``before`` to ``after`` changed (committed states: never changed later)."""
        changed = {name: value for name, value in after.__dict__.items() if before.__dict__[name] != value}
        self._keep(after.turn, changed)

    def _upto(self, turn: int) -> int:
        """How many kept changes lead to ``turn`` or an earlier one."""
        return bisect_right(self._numbers, turn)

    def cut(self, turn: int) -> None:
        """Forget the turns after ``turn`` (they were undone)."""
        count = self._upto(turn)
        self._changes.truncate(count)
        del self._numbers[count:]

    def state_at(self, turn: int) -> GameState:
        """The game state as it was after ``turn``, validated like a loaded save's.

        Raises:
            HistoryError: the history does not reach ``turn``, or what it saved does not make a valid state.
        """
        if not self.first <= turn <= self.last:
            raise HistoryError(f"this save's history holds turns {self.first} to {self.last}, not turn {turn}")
        fields = dict(self.start.__dict__)
        for changed in self._changes.items(self._upto(turn)):
            fields.update(changed)
        try:
            return GameState.model_validate(orjson.loads(orjson.dumps(fields, default=model_fields)))
        except (ValidationError, orjson.JSONDecodeError, TypeError) as exc:
            raise HistoryError(f"the history of turn {turn} is damaged ({str(exc).splitlines()[0]})") from None

    def saved(self, upto: int | None = None, *, parted: bool = False) -> dict[str, Any]:
        """The save's ``history`` (JSON-ready; each turn's JSON encoded once, when it was recorded), up to turn
        ``upto`` (a branch) or whole; with ``parted``, as a save writes it: its turns past their sealed parts, and
        the parts (``export.Part``) under ``parts`` (``format.encode`` takes them out)."""
        count = None if upto is None else self._upto(upto)
        if not parted:
            return {"start": self._start_json, "turns": self._changes.fragment(count)}
        parts, turns = self._changes.parted(count)
        return {"start": self._start_json, "turns": turns, "parts": parts}

    @property
    def nbytes(self) -> int:
        """Bytes the turns' changes take (their JSON and their numbers)."""
        return self._changes.nbytes + self._numbers.itemsize * len(self._numbers)
