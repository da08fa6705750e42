"""Memory bounded by the file (issue 33, item 2): a save is refused by its size and its parts before it is parsed,
the game never writes one it would refuse, and what a game keeps to save again grows by its JSON, not by an
object per turn.

Was: a 7.5 MB save of 500,000 one-field history turns loaded with a 2.2 GB peak, 7.4 MB of 100,000 log episodes
took 15 s and 970 MB, a 47.6 MB one 63 s and 12.9 GB; an honest 5,000-turn game kept ~35 MB of small ``bytes``
objects (one per turn's change, one per logged episode). Peak memory and load time per shape are measured in
``bench/save_memory.py``; these tests hold the bounds and the compact caches.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import orjson
import pytest

from game.memory.export import StateEncoder
from game.memory.records import Episode, MemoryState, model_fields
from game.saves import parted
from game.saves.format import MAX_SAVE_BYTES, MAX_SAVE_OBJECTS, MAX_SAVE_VALUES, SaveError, encode
from game.saves.history import GameHistory
from game.world.state import new_game
from tests.conftest import scripted_session

session = scripted_session


def history_turns(doc: dict[str, Any]) -> None:
    start = doc["game"]["turn"]
    count = MAX_SAVE_OBJECTS + 1
    doc["history"] = {"start": dict(doc["game"]), "turns": [{"turn": start + i} for i in range(1, count + 1)]}
    doc["game"]["turn"] = doc["turn"] = start + count


def log_episodes(doc: dict[str, Any]) -> None:
    doc["memory"]["log"] += [{"turn": 1, "action": "", "narration": "", "node": ""}] * (MAX_SAVE_OBJECTS + 1)


def empty_objects(doc: dict[str, Any]) -> None:
    doc["history"]["turns"] = [{}] * (MAX_SAVE_OBJECTS + 1)


def empty_strings(doc: dict[str, Any]) -> None:
    doc["memory"]["pending_vectors"] = [""] * (MAX_SAVE_VALUES + 1)


@pytest.mark.parametrize(
    ("grow", "says"),
    [
        (history_turns, "JSON objects"),
        (log_episodes, "JSON objects"),
        (empty_objects, "JSON objects"),
        (empty_strings, "JSON values"),
    ],
)
def test_a_save_of_too_many_parts_is_refused_before_it_is_parsed_and_the_game_goes_on(
    fantasy, tmp_path, grow: Callable[[dict[str, Any]], None], says: str
):
    game = session(fantasy, tmp_path)
    for action in ["look", "go east", "look"]:
        assert game.play(action).ok
    doc = orjson.loads(game.snapshot())
    grow(doc)
    data = orjson.dumps(doc)
    assert len(data) < MAX_SAVE_BYTES  # small files: the parts, not the bytes, are what a load would pay for
    assert game.slots is not None
    game.slots.write("hostile", data)
    before = game.engine.state
    with pytest.raises(SaveError, match=f"too many parts for a save .*{says}"):
        game.load("hostile")
    assert game.engine.state is before
    assert game.play("look").ok


def test_the_game_never_writes_a_save_it_would_refuse(fantasy, tmp_path, monkeypatch):
    """A whole file past the bounds of one is refused; the game's own save keeps its long lists in parts
    (``parted.py``), and is refused only past the bounds of a whole game (lowered here to what this game holds)."""
    monkeypatch.setattr(parted, "MAX_GAME_OBJECTS", MAX_SAVE_OBJECTS)
    game = session(fantasy, tmp_path)
    assert game.play("look").ok
    game.save("kept")
    kept = (tmp_path / "kept.json").read_bytes()
    memory = game.engine.memory.state
    episodes = [Episode(turn=1, action="look", narration="Fog.", node="Path")] * (MAX_SAVE_OBJECTS + 1)
    grown = memory.model_copy(update={"log": episodes})
    with pytest.raises(SaveError, match=r"grown past what a save holds.*too many parts"):
        encode(fantasy, game.engine.state, orjson.dumps(grown, default=model_fields), session_id="s")
    game.engine.memory.restore(grown)
    with pytest.raises(SaveError, match="grown past what a save holds"):
        game.save("kept")
    assert (tmp_path / "kept.json").read_bytes() == kept  # the last good save is untouched


def retained(build: Callable[[], Any]) -> tuple[Any, int]:
    """What ``build`` returns and the bytes of Python memory it keeps (tracemalloc)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        built = build()
        return built, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_a_history_keeps_each_turn_as_its_json_and_gives_back_every_state(fantasy):
    states = [new_game(fantasy, seed=5)]
    for turn in range(1, 2001):
        states.append(states[-1].model_copy(update={"turn": turn, "clock_minutes": 480 + 10 * turn}))

    def record() -> GameHistory:
        history = GameHistory(states[0])
        for before, after in pairwise(states):
            history.record(before, after)
        return history

    history, kept = retained(record)
    json_bytes = len(orjson.dumps(orjson.loads(orjson.dumps(history.saved()))["turns"]))
    assert kept < 1.2 * json_bytes + 32 * 2000, f"{kept:,} bytes kept for {json_bytes:,} bytes of JSON"  # was ~40x
    assert history.state_at(1234) == states[1234]
    history.cut(1500)
    turns = orjson.loads(orjson.dumps(history.saved()))["turns"]
    assert turns == [{"turn": n, "clock_minutes": 480 + 10 * n} for n in range(1, 1501)]
    assert orjson.loads(orjson.dumps(history.saved(upto=7)))["turns"][-1]["turn"] == 7


def test_the_export_keeps_the_log_as_its_json_and_encodes_what_the_state_holds():
    log = [Episode(turn=n, action=f"look {n}", narration="Fog on the path.", node="Path") for n in range(1, 2001)]
    state = MemoryState(session_id="s", log=log)
    encoder = StateEncoder()
    _, kept = retained(lambda: len(encoder.encode(state)))  # what the encoder keeps, not the save it returns
    log_json = len(orjson.dumps([e.model_dump(mode="json") for e in log]))
    assert kept < 1.2 * log_json + 32 * 2000, f"{kept:,} bytes kept for {log_json:,} bytes of JSON"  # was ~4x
    assert orjson.loads(encoder.encode(state)) == state.model_dump(mode="json")
    shorter = state.model_copy(update={"log": [*log[:1000], Episode(turn=1001, action="x", narration="y", node="")]})
    assert orjson.loads(encoder.encode(shorter)) == shorter.model_dump(mode="json")  # an undo, then a new turn


def test_braces_and_commas_the_player_types_never_make_a_game_unsaveable(fantasy, tmp_path):
    """Was (issue 43): the size check counted every ``{`` and ``,`` in the file, inside text too, so a player who
    typed braces could no longer save from turn 36 (and the notice advised ``save NAME``, which failed the same
    way). The bounds count the JSON's structure; what is typed is text."""
    game = session(fantasy, tmp_path)
    typed = "{" * 470 + ",,"
    for n in range(70):
        assert game.play(f"look {typed} {n}").ok
    game.save("braces")
    data = (tmp_path / "braces.json").read_bytes()
    assert data.count(b"{") > MAX_SAVE_OBJECTS  # what the old check counted
    game.load("braces")
    assert game.engine.state.turn >= 70
