"""Undo, redo, retry and branches through the session, with real embeddings and Chroma where recall is asserted.

What is checked is the guarantee at its edge: after an undo or a retry, nothing of the turn taken back is
recalled (a planted fact, asked for directly), kept in memory's state or in the autosave; an undo while a slow
model is still summarising discards that summary; a branch, from the session or from a save, recalls nothing
after its turn; and a save's history gives back every turn's state exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from game.cli import main as cli_main
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.base import PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.format import SaveError, decode
from game.saves.history import GameHistory
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.fakes import GatedSummarizer
from tests.test_save_memory import OPENING, everything_injected, play

PLANT = ["say my name is Zebulon", "tell garrick my secret is that I stole the silver chalice"]


@pytest.fixture(scope="module")
def fantasy():
    return load_pack(content_root() / "fantasy_001")


class CountingNarrator(ScriptedNarrator):
    """The scripted narrator, counting its calls (a spy: it narrates exactly as the scripted one does)."""

    def __init__(self, pack) -> None:
        super().__init__(pack)
        self.calls = 0
        self.attempts: list[int] = []

    def narrate(self, bundle: PromptBundle) -> str:
        self.calls += 1
        self.attempts.append(bundle.attempt)
        return super().narrate(bundle)


class SecretTeller(ScriptedNarrator):
    """A narrator whose first telling of a turn invents a secret and notes it for memory, and whose retold one
    does not: a fake on purpose, so a test can tell what each telling left behind."""

    def turn(self, bundle: PromptBundle) -> dict[str, Any]:
        answer = super().turn(bundle)
        if bundle.attempt == 0 and bundle.command.verb == "look":
            answer["narration"] += " Carved in the wood you read: the vault code is PERIWINKLE-NINE."
            answer["memory_notes"] = [
                {"entry_type": "item", "key": "item:vault_code", "content": "The vault code is PERIWINKLE-NINE."}
            ]
        return answer


def session(pack, root, *, store=None, embedder=None, narrator=None, summarizer=None) -> GameSession:
    narrator = narrator or ScriptedNarrator(pack)
    memory = GameMemory(pack, summarizer or narrator, store=store, embedder=embedder)
    memory.prepare()
    return GameSession(TurnPipeline(pack, new_game(pack, seed=3), narrator, memory), SlotStore(root))


def memory_json(game: GameSession) -> dict[str, Any]:
    """Memory's state as a save holds it, less what only says which vectors were still being embedded."""
    state = json.loads(game.engine.memory.export_json(complete=True))
    state.pop("pending_vectors")
    for entry in state["bible"]:
        entry.pop("embedding_model"), entry.pop("embedding_version")
    return state


def test_undo_takes_turns_back_and_nothing_of_them_is_recalled_or_saved(fantasy, embedder, chroma_store, tmp_path):
    game = session(fantasy, tmp_path, store=chroma_store, embedder=embedder)
    play(game, OPENING)  # 8 turns
    before_state, before_memory = game.engine.state.model_copy(deep=True), memory_json(game)
    play(game, PLANT)  # turns 9 and 10: the consolidation of 6-10 summarises the planted facts
    game.engine.memory.flush()
    assert "zebulon" in everything_injected(game.play("what is my name?"))  # the control: recalled
    assert [s.turn for s in game.engine.memory.state.summaries] == [5, 10]

    for _ in range(3):  # the question, then the two planted turns
        assert game.play("undo").ok
    assert game.engine.state == before_state
    assert memory_json(game) == before_memory  # the window, summaries, Bible and synopsis as they were
    for question in ("what is my name?", "what did I tell garrick about the silver chalice?"):
        seen = everything_injected(game.play(question))
        assert "zebulon" not in seen and "chalice" not in seen, question
    game.wait_for_autosave()
    autosave = (tmp_path / "autosave.json").read_bytes().lower()  # holds the questions: "chalice" is asked about
    assert b"zebulon" not in autosave and b"stole" not in autosave
    assert decode((tmp_path / "autosave.json").read_bytes()).turn == len(OPENING) + 2  # the two questions since
    game.close(save=False)


def test_redo_plays_undone_turns_again_without_the_narrator(fantasy, tmp_path):
    narrator = CountingNarrator(fantasy)
    game = session(fantasy, tmp_path, narrator=narrator)
    play(game, OPENING[:3] + PLANT)
    after_state, after_memory, calls = game.engine.state.model_copy(deep=True), memory_json(game), narrator.calls
    assert game.play("undo").ok and game.play("undo").ok
    assert game.engine.state.turn == 3
    redone = game.play("redo")
    assert redone.ok and redone.meta == "redo" and "Zebulon" in redone.narration
    assert game.play("redo").ok
    assert not game.play("redo").ok  # nothing more to redo
    assert narrator.calls == calls  # told as it was: no narrator call
    assert game.engine.state == after_state and memory_json(game) == after_memory

    assert game.play("undo").ok
    play(game, ["look"])  # a new turn after an undo: the undone one cannot be redone any more
    refused = game.play("redo")
    assert not refused.ok and "Nothing to redo" in refused.narration
    game.close(save=False)


def test_meta_commands_are_not_turns_and_undo_stops_where_the_session_began(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    play(game, ["look", "go east"])
    game.play("inventory")
    game.play("saves")
    assert game.play("undo").ok and game.engine.state.turn == 1  # the turn, not the inventory
    assert game.play("undo").ok and game.engine.state.turn == 0
    refused = game.play("undo")
    assert not refused.ok and "starts at turn 0" in refused.narration

    play(game, ["go east", "talk to garrick", "look"])
    game.save("three")
    play(game, ["go west"])
    game.load("three")  # after a load, undo reaches back to the loaded turn and no further
    play(game, ["rest"])
    assert game.play("undo").ok and game.engine.state.turn == 3
    assert not game.play("undo").ok and game.engine.state.turn == 3
    game.close(save=False)


def test_retry_tells_the_turn_again_and_nothing_of_the_first_telling_remains(fantasy, embedder, chroma_store, tmp_path):
    game = session(fantasy, tmp_path, store=chroma_store, embedder=embedder, narrator=SecretTeller(fantasy))
    play(game, OPENING[:4])  # turn 4 is a "look": the first telling plants the vault code
    first = game.history[-1].narration
    assert "PERIWINKLE" in first
    assert any("PERIWINKLE" in e.content for e in game.engine.memory.state.bible)

    retold = game.play("retry")
    assert retold.ok and retold.turn == 4 and retold.narration != first
    assert "PERIWINKLE" not in retold.narration
    assert game.engine.state.turn == 4
    play(game, ["rest"])  # turn 5: a consolidation, and the autosave
    game.engine.memory.flush()
    game.wait_for_autosave()
    for where in (
        orjson.dumps(memory_json(game)),
        (tmp_path / "autosave.json").read_bytes(),
        orjson.dumps([r.narration for r in game.history]),
    ):
        assert b"periwinkle" not in where.lower()
    seen = everything_injected(game.play("what is the vault code?"))
    assert "periwinkle" not in seen
    again = game.play("undo") and game.play("undo") and game.play("retry")
    assert again.narration not in (first, retold.narration)  # each retry is another telling
    game.close(save=False)


def test_retry_asks_a_model_with_another_seed_and_a_failed_retry_keeps_the_telling(fantasy, tmp_path):
    narrator = CountingNarrator(fantasy)
    game = session(fantasy, tmp_path, narrator=narrator)
    play(game, ["look", "go east"])
    told = game.engine.state.model_copy(deep=True)
    first, second = game.play("retry"), game.play("retry")
    assert first.ok and second.ok and first.narration != second.narration
    assert narrator.attempts == [0, 0, 1, 2]

    def down(bundle: PromptBundle) -> str:
        raise ConnectionError("the network is down")

    narrator.narrate = down  # type: ignore[method-assign]
    failed = game.play("retry")
    assert not failed.ok and "The last telling stands" in failed.narration
    assert game.engine.state.turn == told.turn and game.engine.state.node == told.node
    assert game.engine.memory.state.log[-1].narration == second.narration  # the second retry's telling
    game.close(save=False)


def test_an_undo_while_the_summary_is_running_discards_it(fantasy, tmp_path):
    gate = GatedSummarizer()
    game = session(fantasy, tmp_path, summarizer=gate)
    play(game, OPENING[:5])
    assert gate.started.wait(10)  # the consolidation of turns 1-5 is running, blocked in the "model"
    assert game.play("undo").ok
    gate.release.set()
    game.engine.memory.wait_for_consolidation()
    assert game.engine.memory.state.summaries == [] and game.engine.state.turn == 4
    play(game, ["rest"])  # turn 5 again, told differently: its own summary
    game.engine.memory.flush()
    [summary] = game.engine.memory.state.summaries
    assert (summary.first_turn, summary.turn) == (1, 5)
    assert game.engine.memory.consolidations == 1  # the summary made before the undo was not kept
    assert [e.action for e in game.engine.memory.state.log][-1] == "rest"
    game.close(save=False)


def test_a_branch_from_the_session_recalls_nothing_after_its_turn(fantasy, embedder, chroma_store, tmp_path):
    game = session(fantasy, tmp_path, store=chroma_store, embedder=embedder)
    play(game, OPENING)
    at_branch = game.engine.state.model_copy(deep=True)
    play(game, [*PLANT, "look", "rest"])
    game.save("main")
    main = (tmp_path / "main.json").read_bytes()
    told = game.branch(len(OPENING), "before-the-secret")
    assert "Branched turn 8" in told and game.engine.state.turn == len(OPENING) + 4  # this game goes on
    with pytest.raises(SaveError, match="already a save"):
        game.branch(3, "main")
    with pytest.raises(SaveError, match="not turn 99"):
        game.branch(99, "nowhere")

    game.load("before-the-secret")
    assert game.engine.state == at_branch
    for question in ("what is my name?", "what did I tell garrick about the silver chalice?"):
        seen = everything_injected(game.play(question))
        assert "zebulon" not in seen and "chalice" not in seen, question
    assert (tmp_path / "main.json").read_bytes() == main  # the game branched from is kept as it was
    game.load("main")
    assert "zebulon" in everything_injected(game.play("what is my name?"))
    game.close(save=False)


def test_slots_branch_starts_from_any_turn_of_a_saved_game(fantasy, embedder, chroma_store, tmp_path, capsys):
    game = session(fantasy, tmp_path, store=chroma_store, embedder=embedder)
    states = {0: game.engine.state.model_copy(deep=True)}
    for action in OPENING + PLANT + ["look", "rest", "go east"]:
        play(game, [action])
        states[game.engine.state.turn] = game.engine.state.model_copy(deep=True)
    game.save("main")
    saved = SlotStore(tmp_path).read("main").save
    history = GameHistory.of(saved.history, saved.game)
    assert all(history.state_at(turn) == state for turn, state in states.items())  # every turn, exactly

    code = cli_main(["slots", "branch", "main", "--turn", "8", "eight", "--data-dir", str(tmp_path)])
    assert code == 0 and "turn 8" in capsys.readouterr().out
    branch = SlotStore(tmp_path).read("eight").save
    assert branch.turn == 8 and branch.game == states[8] and branch.place == "Old Hunter's Lodge"
    assert max(e.turn for e in branch.memory.log) == 8 and all(s.turn <= 8 for s in branch.memory.summaries)
    assert not [e for e in branch.memory.bible if "zebulon" in e.content.lower()]

    game.load("eight")
    seen = everything_injected(game.play("what is my name?"))
    assert "zebulon" not in seen and "chalice" not in seen
    game.close(save=False)
    assert cli_main(["slots", "branch", "main", "--turn", "99", "x", "--data-dir", str(tmp_path)]) != 0
    assert "not turn 99" in capsys.readouterr().err
    # issue 43: a branch at turn 0 was said to be at the last turn's place; it is where the game began
    assert cli_main(["slots", "branch", "main", "--turn", "0", "zero", "--data-dir", str(tmp_path)]) == 0
    start = fantasy.nodes[fantasy.story.start_node].name
    assert f"turn 0 ({start})" in capsys.readouterr().out
    assert SlotStore(tmp_path).read("zero").save.place == start != saved.place


def test_a_save_without_history_or_with_a_hostile_one_is_refused_with_a_reason(fantasy, tmp_path):
    game = session(fantasy, tmp_path)
    play(game, OPENING[:4])
    game.save("main")
    game.close(save=False)
    raw = orjson.loads((tmp_path / "main.json").read_bytes())
    store = SlotStore(tmp_path)

    older = {k: v for k, v in raw.items() if k != "history"}  # a save made before histories were kept
    (tmp_path / "older.json").write_bytes(orjson.dumps(older))
    with pytest.raises(SaveError, match="holds turns 4 to 4, not turn 2"):
        store.branch("older", 2, "b1")

    bad_value = json.loads(json.dumps(raw))
    bad_value["history"]["turns"][1]["hp"] = "a lot"
    (tmp_path / "bad-value.json").write_bytes(orjson.dumps(bad_value))
    with pytest.raises(SaveError, match="history of turn 2 is damaged"):
        store.branch("bad-value", 2, "b2")
    assert store.branch("bad-value", 1, "b3").save.turn == 1  # the turns before the damage still branch

    bad_field = json.loads(json.dumps(raw))
    bad_field["history"]["turns"][0]["__class__"] = 1
    (tmp_path / "bad-field.json").write_bytes(orjson.dumps(bad_field))
    with pytest.raises(SaveError, match=r"history\.turns\.0\.__class__"):
        store.read("bad-field")
    for name, damage in (
        ("out-of-order", lambda turns: turns.reverse()),
        ("huge-number", lambda turns: turns[0].update(gold=2**70)),  # JSON allows it; the game cannot hold it
        ("nested", lambda turns: turns[0].update(flags=[[[[[[["deep"]]]]]]])),
    ):
        hostile = json.loads(json.dumps(raw))
        damage(hostile["history"]["turns"])
        (tmp_path / f"{name}.json").write_text(json.dumps(hostile))
        loaded = store.read(name).save  # the game itself loads: a damaged history costs the branches only
        assert loaded.turn == 4 and loaded.game == decode((tmp_path / "main.json").read_bytes()).game
        with pytest.raises(SaveError, match=r"history (holds turns 4 to 4|of turn 1 is damaged)"):
            store.branch(name, 1, f"{name}-branch")
    assert not store.exists("b1") and not store.exists("b2")
    again = session(fantasy, tmp_path)
    again.load("huge-number")  # and played on: its history starts again at the loaded turn
    play(again, ["look"])
    assert again.timeline.history.first == 4
    again.save("played-on")
    assert store.branch("played-on", 5, "b5").save.turn == 5
    again.close(save=False)


def test_a_saved_ending_keeps_the_turn_before_it_within_undo_and_retry(fantasy, tmp_path):
    """Was: a save of an ended game (the autosave at the ending, the save on quit) started the session at the
    ending, so undo had nothing to take back; only ``storyecho slots branch`` could rebuild the turn before."""
    lines = (Path(__file__).parent / "walkthroughs" / "fantasy_001__eternal_night.txt").read_text()
    actions = [line.strip() for line in lines.splitlines() if line.strip() and not line.startswith("#")]
    game = session(fantasy, tmp_path)
    play(game, actions[:-1])
    eve, eve_memory = game.engine.state.model_copy(deep=True), memory_json(game)
    play(game, actions[-1:])
    ended = game.engine.state.model_copy(deep=True)
    assert ended.ending == "eternal_night"
    game.close()  # the ending, saved on quit (over its autosave)

    again = session(fantasy, tmp_path)
    again.load("autosave")
    assert again.engine.state == ended
    undone = again.play("undo")
    assert undone.ok and f"Back at turn {eve.turn}" in undone.narration
    assert again.engine.state == eve
    memory = memory_json(again)
    assert memory.pop("next_entry") >= eve_memory.pop("next_entry")  # as a branch: ids stay unique
    assert memory == eve_memory
    assert again.play("redo").ok and again.engine.state == ended
    told = again.timeline.now.narration
    retold = again.play("retry")
    assert retold.ok and retold.narration != told and again.engine.state.ending == ended.ending
    assert again.play("undo").ok and again.play("look").ok and again.engine.state.ending is None
    again.close(save=False)

    older = orjson.loads((tmp_path / "autosave.json").read_bytes())
    del older["history"]  # a save made before histories were kept: the ending is where it starts
    (tmp_path / "older.json").write_bytes(orjson.dumps(older))
    last = session(fantasy, tmp_path)
    last.load("older")
    refused = last.play("undo")
    assert not refused.ok and "Nothing to undo" in refused.narration
    last.close(save=False)
