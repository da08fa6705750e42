"""The player's Story Bible reviews are the player's, not the turn's (issue 33, item 3).

Undo, redo, retry and branches return memory to a moment of the game; a review the player made in F12 at any
time (before the moment, after it, after an undo) stays made: the rejected fact stays out of the prompt, the pinned
one stays in it. Through the session API the TUI uses (``GameSession.play``, ``GameMemory.review_bible``).
"""

from __future__ import annotations

import orjson
import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.records import MemoryState
from game.saves.format import branch, decode, encode
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game

BOB = "The player's name is Bob"
MOONVINE = "lore:moonvine"


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def session(pack, root) -> GameSession:
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, background=False)
    memory.prepare()
    return GameSession(TurnPipeline(pack, new_game(pack, seed=3), narrator, memory), SlotStore(root))


def entries(game: GameSession) -> dict[str, tuple[str, bool]]:
    return {e.canonical_key: (e.status, e.pinned) for e in game.engine.memory.bible_entries()}


def sent(result) -> str:
    return result.trace.prompt.system + "\n\n" + result.trace.prompt.user


def pinned_block(result) -> list[str]:
    block = result.trace.memory.block("pinned")
    return [i.source for i in block.items] if block else []


def review(game: GameSession, key: str, action: str) -> str:
    """Review the active entry under ``key`` as the F12 screen does; returns its id."""
    memory = game.engine.memory
    (entry,) = [e for e in memory.bible_entries() if e.canonical_key == key and e.status == "active"]
    memory.review_bible(entry.id, action, game.engine.state.turn)  # type: ignore[arg-type]
    return entry.id


def reviewed(game: GameSession) -> tuple[str, str]:
    """Play two turns, name the player Bob, then reject the name and pin the moonvine; returns their ids."""
    for action in ["say my name is Bob", "look"]:
        assert game.play(action).ok
    assert BOB in sent(game.play("look"))  # the control: the name is in the prompt before it is rejected
    return review(game, "character:player", "reject"), review(game, MOONVINE, "pin")


def assert_kept(game: GameSession, result=None) -> None:
    """The rejection and the pin hold in memory and in the prompt of ``result`` (else of a new turn)."""
    states = entries(game)
    assert states["character:player"] == ("rejected", False)
    assert states[MOONVINE] == ("active", True)
    result = result or game.play("look")
    assert result.ok
    assert BOB not in sent(result)
    assert pinned_block(result) == [
        next(e.id for e in game.engine.memory.bible_entries() if e.canonical_key == MOONVINE)
    ]


def test_undo_keeps_the_reviews_made_before_the_turn_undone(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    reviewed(game)
    assert game.play("look").ok
    assert game.play("undo").ok
    assert_kept(game)


def test_undo_past_the_review_keeps_it(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    reviewed(game)
    assert game.play("undo").ok and game.play("undo").ok  # back before the turn the review was made at
    assert game.engine.state.turn == 1
    assert_kept(game)


def test_redo_keeps_a_review_made_after_the_undo(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    for action in ["say my name is Bob", "look", "look"]:
        assert game.play(action).ok
    assert game.play("undo").ok
    review(game, "character:player", "reject")
    review(game, MOONVINE, "pin")
    assert game.play("redo").ok  # the turn redone was played before the review
    assert game.engine.state.turn == 3
    assert_kept(game)


def test_retry_keeps_the_reviews_and_its_telling_sees_them(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    reviewed(game)
    assert game.play("look").ok
    retold = game.play("retry")
    assert retold.ok and retold.meta is None
    assert_kept(game, retold)
    assert game.play("undo").ok  # and the turn before the retold one
    assert_kept(game)


def test_a_branch_keeps_the_reviews_made_after_its_turn(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    reviewed(game)
    assert game.play("look").ok
    game.branch(1, "early")  # turn 1: before the review
    game.save("whole")

    other = session(fantasy, tmp_path)
    other.load("early")
    assert other.engine.state.turn == 1
    assert_kept(other)

    # a branch of the saved game (``storyecho slots branch``), memory as of turn 1
    (tmp_path / "late.json").write_bytes(branch(SlotStore(tmp_path).read("whole").save, 1))
    third = session(fantasy, tmp_path)
    third.load("late")
    assert_kept(third)


def test_a_review_of_a_fact_the_undone_turn_made_returns_with_the_turn(fantasy, tmp_path):
    """A review of a fact made by a turn later undone waits for it: redone or retold with the same fact, the fact
    is reviewed again."""
    game = session(fantasy, tmp_path)
    assert game.play("look").ok and game.play("say my name is Bob").ok
    review(game, "character:player", "reject")
    assert game.play("undo").ok
    assert "character:player" not in entries(game)
    assert game.play("redo").ok
    assert entries(game)["character:player"] == ("rejected", False)
    retold = game.play("retry")  # another telling of the same action: the same fact, rejected by the player
    assert retold.ok and BOB not in sent(game.play("look"))
    assert entries(game)["character:player"] == ("rejected", False)


def test_a_changed_mind_is_what_stays(fantasy, tmp_path):
    """Reject, then accept again; pin, then unpin: undo keeps the last word on each."""
    game = session(fantasy, tmp_path)
    bob, moonvine = reviewed(game)
    memory = game.engine.memory
    memory.review_bible(bob, "accept", 2)
    memory.review_bible(moonvine, "unpin", 2)
    assert game.play("look").ok
    assert game.play("undo").ok and game.play("undo").ok
    states = entries(game)
    assert states["character:player"] == ("active", False) and states[MOONVINE] == ("active", False)
    assert BOB in sent(game.play("look"))


def test_saves_without_reviews_still_load(fantasy, tmp_path):
    """A save written before reviews were kept apart (no ``reviews``) loads, with none."""
    game = session(fantasy, tmp_path)
    bob, _ = reviewed(game)
    raw = orjson.loads(game.engine.memory.export_json())
    raw.pop("reviews", None)
    save = decode(encode(fantasy, game.engine.state, orjson.dumps(raw), session_id=raw["session_id"]))
    assert save.memory.reviews == []
    assert next(e for e in save.memory.bible if e.id == bob).status == "rejected"  # the review itself is saved
    assert MemoryState.model_validate(raw).reviews == []
