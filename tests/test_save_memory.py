"""Memory follows the save: loading restores exactly what the save holds, with real embeddings and Chroma.

A save holds the text; Chroma holds an index of it. Loading an older save
never recalls its future, a copy of a slot is a branch that never leaks into
the original, and a memory built from a saved state (``GameMemory(state=...)``
then ``prepare()``) reuses the vectors the store has and embeds what it lacks.
"""

from __future__ import annotations

import re
import shutil

import orjson
import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.report import turn_json
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.records import MemoryState, to_json
from game.memory.vectors.chroma import open_chroma
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.fakes import CountingEmbedder, GatedSummarizer

OPENING = ["go east", "talk to garrick", "ask garrick about hal", "look", "go west", "look", "rest", "go east"]
PLANT = [
    "say my name is Zebulon",
    "tell garrick my secret is that I stole the silver chalice",
    "look",
    "rest",
    "look",
    "go west",
]
BRANCH = ["say my name is Quentin", "tell garrick I buried a copper lantern", "look", "rest", "look", "go east"]


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


def session(pack, store, embedder, root) -> GameSession:
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, store=store, embedder=embedder)
    memory.prepare()
    return GameSession(TurnPipeline(pack, new_game(pack, seed=3), narrator, memory), SlotStore(root))


def play(game: GameSession, actions: list[str]) -> None:
    for action in actions:
        result = game.play(action)
        assert result.ok, result.error


def everything_injected(result) -> str:
    """All the narrator was given for a turn and all the trace reports, less the action itself (and its reading,
    the action's own words clause by clause): one text to search."""
    line = turn_json(result)
    line.pop("understood")
    return orjson.dumps(line).decode().lower().replace(result.action.lower(), "")


def test_loading_an_older_save_never_recalls_its_future(fantasy, embedder, chroma_store, tmp_path):
    game = session(fantasy, chroma_store, embedder, tmp_path)
    play(game, OPENING)
    game.save("early")
    play(game, PLANT)
    game.save("late")
    assert "zebulon" in everything_injected(game.play("what is my name?"))  # the control: the fact is recalled

    game.load("early")
    assert game.engine.state.turn == len(OPENING)
    asked = game.play("what is my name?")
    seen = everything_injected(asked)
    assert "zebulon" not in seen and "chalice" not in seen
    secret = everything_injected(game.play("what did I tell garrick about the silver chalice?"))
    assert "zebulon" not in secret and not re.search(r"\bstole\b", secret)  # lore says "stolen elven silver"

    game.load("late")  # and forward again: the later save's memories are all there
    assert "zebulon" in everything_injected(game.play("what is my name?"))
    game.close(save=False)


def test_a_copy_of_a_slot_is_a_branch_that_never_leaks_into_the_original(fantasy, embedder, chroma_store, tmp_path):
    game = session(fantasy, chroma_store, embedder, tmp_path)
    play(game, OPENING + PLANT)
    game.save("main")
    original = (tmp_path / "main.json").read_bytes()
    shutil.copyfile(tmp_path / "main.json", tmp_path / "branch.json")

    game.load("branch")  # the same session id, the same store: a branch of the same game
    play(game, BRANCH)  # crosses a consolidation
    assert "quentin" in everything_injected(game.play("what is my name?"))
    game.save("branch")
    assert (tmp_path / "main.json").read_bytes() == original

    game.load("main")
    play(game, ["look", "rest", "go east", "look", "rest", "look"])
    for question in ("what is my name?", "what did I bury?", "what did I tell garrick about a copper lantern?"):
        seen = everything_injected(game.play(question))
        assert "quentin" not in seen and "copper lantern" not in seen, question
    assert "zebulon" in everything_injected(game.play("what is my name?"))
    game.close(save=False)


def test_a_memory_built_from_a_saved_state_reuses_stored_vectors_and_embeds_what_is_missing(
    fantasy, embedder, chroma_store, tmp_path
):
    game = session(fantasy, chroma_store, embedder, tmp_path)
    play(game, OPENING + PLANT)
    exported = orjson.loads(game.engine.memory.export_json(complete=True))
    # the save's fast encoding of the live models is exactly pydantic's own dump of them
    assert exported == game.engine.memory.state.model_dump(mode="json")
    assert orjson.loads(to_json(game.engine.state)) == game.engine.state.model_dump(mode="json")
    saved = MemoryState.model_validate(exported)
    question = "what is my name?"
    expected = game.engine.memory.search_memories(question, game.engine.state, 5)
    game.close(save=False)
    assert not saved.pending_vectors

    counting = CountingEmbedder(embedder)
    same_store = GameMemory(fantasy, ScriptedNarrator(fantasy), store=chroma_store, embedder=counting, state=saved)
    same_store.prepare()
    same_store.flush()
    assert counting.texts == []  # everything was in the store already: nothing embedded again

    empty = open_chroma(tmp_path / "other-index")
    counting = CountingEmbedder(embedder)
    rebuilt = GameMemory(
        fantasy, ScriptedNarrator(fantasy), store=empty, embedder=counting, state=saved.model_copy(deep=True)
    )
    rebuilt.prepare()
    rebuilt.flush()
    episodes = [e.text() for e in saved.log]
    assert len(counting.texts) >= len(episodes)  # the lost index was rebuilt from the saved text
    assert rebuilt.state.pending_vectors == []
    state = game.engine.state
    for memory in (same_store, rebuilt):
        found = memory.search_memories(question, state, 5)
        assert [m.id for m in found] == [m.id for m in expected]
        assert "zebulon" in " ".join(m.text for m in found).lower()
        memory.close()


def test_an_autosave_made_while_the_summary_is_running_queues_it_again_on_load(fantasy, tmp_path):
    """The autosave at turn 5 does not wait for the summary; the game loaded from it writes that summary."""
    gate = GatedSummarizer()
    memory = GameMemory(fantasy, gate)  # keyword memory, consolidation in the background worker
    memory.prepare()
    game = GameSession(
        TurnPipeline(fantasy, new_game(fantasy, seed=3), ScriptedNarrator(fantasy), memory), SlotStore(tmp_path)
    )
    play(game, OPENING[:5])
    assert gate.started.wait(10)  # the consolidation of turns 1-5 is running, blocked
    game.wait_for_autosave()  # the autosave thread wrote it meanwhile
    saved = SlotStore(tmp_path).read("autosave").save  # written at turn 5 without waiting for it
    assert saved.turn == 5 and saved.memory.summaries == [] and saved.memory.last_consolidated_turn == 0
    gate.release.set()
    game.close(save=False)

    loaded = GameSession(
        TurnPipeline(fantasy, new_game(fantasy, seed=3), ScriptedNarrator(fantasy), GameMemory(fantasy, gate)),
        SlotStore(tmp_path),
    )
    loaded.load("autosave")
    play(loaded, ["look", "rest", "look", "go west", "look"])  # to turn 10, the next consolidation
    loaded.engine.memory.flush()
    summaries = loaded.engine.memory.state.summaries
    assert [(s.first_turn, s.turn) for s in summaries] == [(1, 5), (6, 10)]  # not one late summary of 1-10
    loaded.close(save=False)
