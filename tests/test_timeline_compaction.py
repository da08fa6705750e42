"""The undo timeline is bounded, not cut (issue 33, item 5): older moments are compacted and rebuilt on demand.

Was: every moment kept the game state and a frozen copy of memory (a pointer per logged episode and entry), so
a long session grew without limit (+73 MB at 2,000 turns). Now only the last ``FULL_MOMENTS`` are kept whole;
undo, redo and a branch still reach every turn back to where the session started, and find the game and memory
as they were (memory as of the turn: ``MemoryState.as_of``). ``bench/save_memory.py`` measures what it keeps.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from game.engine import timeline
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.engine.timeline import Compacted, Moment
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.format import decode
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ACTIONS = [
    "go east",
    "talk to garrick",
    "say my name is Zebulon",
    "ask garrick about hal",
    "look",
    "go west",
    "tell garrick I buried a copper lantern",
    "rest",
]
TURNS = 18


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def memory_json(game: GameSession) -> dict[str, Any]:
    """Memory as a save holds it, less the entry counter (memory as of a turn keeps the later counter, so ids
    made after an undo never repeat one) and what says which vectors were pending."""
    state = json.loads(game.engine.memory.export_json(complete=True))
    state.pop("pending_vectors"), state.pop("next_entry")
    return state


def test_old_moments_are_compacted_and_undo_redo_and_branch_still_reach_every_turn(fantasy, tmp_path, monkeypatch):
    monkeypatch.setattr(timeline, "FULL_MOMENTS", 4)
    narrator = ScriptedNarrator(fantasy)
    memory = GameMemory(fantasy, narrator, background=False)
    memory.prepare()
    game = GameSession(TurnPipeline(fantasy, new_game(fantasy, seed=3), narrator, memory), SlotStore(tmp_path))
    seen = {0: (game.engine.state.model_copy(deep=True), memory_json(game), "")}
    for n in range(TURNS):
        result = game.play(ACTIONS[n % len(ACTIONS)])
        assert result.ok and result.turn == n + 1, result.error
        seen[result.turn] = (game.engine.state.model_copy(deep=True), memory_json(game), result.narration)

    moments = game.timeline.moments
    assert [m.turn for m in moments] == list(range(TURNS + 1))
    assert sum(isinstance(m, Moment) for m in moments) == 4  # the rest compacted
    assert all(isinstance(m, Compacted) for m in moments[: TURNS + 1 - 4])
    assert [m.action for m in game.timeline.played()][1:4] == ACTIONS[:3]  # the timeline screen still lists them

    for turn in range(TURNS - 1, -1, -1):  # undo reaches back to where the session started
        undone = game.play("undo")
        assert undone.ok and f"Back at turn {turn}" in undone.narration
        state, kept, _ = seen[turn]
        assert game.engine.state == state, turn
        assert memory_json(game) == kept, turn
        assert sum(isinstance(m, Moment) for m in game.timeline.moments) <= 5  # the last ones and the one it is at
    refused = game.play("undo")
    assert not refused.ok and "this session starts at turn 0" in refused.narration

    for turn in range(1, TURNS + 1):  # redo plays each one again as it was told
        redone = game.play("redo")
        state, kept, narration = seen[turn]
        assert redone.ok and narration in redone.narration, turn
        assert game.engine.state == state and memory_json(game) == kept, turn

    assert "Branched turn 3" in game.branch(3, "third")
    branch = decode((tmp_path / "third.json").read_bytes())
    assert branch.game == seen[3][0]
    assert [e.turn for e in branch.memory.log if e.action] == [1, 2, 3]

    for _ in range(TURNS - 6):
        assert game.play("undo").ok
    game.save("at-six")  # a save holds the game where it is, not the turns undone
    at_six = decode((tmp_path / "at-six.json").read_bytes())
    assert at_six.turn == 6 and at_six.history is not None and at_six.history.turns[-1]["turn"] == 6
    assert game.play("look").ok  # a turn played after an undo drops the undone ones
    assert [m.turn for m in game.timeline.moments] == list(range(8))
    game.close(save=False)
