"""A second window at full speed (issue 33, item 6), with a real first game in its own process.

The finding: a one-action ``storyecho run`` on a copy of a 171-turn save took 37.8 s with the Textual game open on
the same data folder, 2.8 s without: the game held the index, and the second process embedded the whole lore and
every memory of the save again before its first recall. Here a first game holds the index (its process is alive
and its lock taken, checked on the lock itself, not on a clock) while a second game, in this process, loads a copy
of the same save and plays: it embeds nothing the index held (before: the knowledge base and every memory), plays
while the lock is held, and both games then load with their own memories.

Fails on the code before readers: the second game's memory embedded 95 lore documents and every saved memory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson

from game.config import load_settings
from game.engine.report import turn_json
from game.engine.session import GameSession
from game.memory.vectors.chroma import IndexBusy, IndexLock
from game.saves.slots import SlotStore
from game.wiring import make_embedder, make_engine
from tests.conftest import MISTY_OPENING
from tests.fakes import CountingEmbedder
from tests.reliability.test_processes import ENV, ROOT, storyecho, turns


def lock_is_held(data: Path) -> bool:
    try:
        IndexLock.acquire(data / ".index.lock").release()
    except IndexBusy:
        return True
    return False


def test_a_second_game_beside_the_first_embeds_nothing_the_index_holds_and_loses_nothing(tmp_path):
    data = tmp_path / "data"
    turns(storyecho("--story", "fantasy_001", "--slot", "one", "--data-dir", str(data), actions=MISTY_OPENING[:15]))
    first = subprocess.Popen(
        [sys.executable, "-m", "game", "run", "--json", "--slot", "one", "--data-dir", str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert first.stdin is not None and first.stdout is not None
    try:
        first.stdin.write("say my name is Ysolde\n")
        first.stdin.flush()
        assert orjson.loads(first.stdout.readline())["turn"] == 16  # the first game holds the index now
        assert lock_is_held(data)

        shutil.copyfile(data / "one.json", data / "two.json")
        shutil.rmtree(data / ".index.embeddings")  # what this measures is the index, not the texts' cache
        settings = load_settings(data_dir=data, llm="scripted")
        model = CountingEmbedder(make_embedder(settings))
        slots = SlotStore(data)
        session = GameSession(make_engine("fantasy_001", settings, embedder=model), slots, slot="two")  # make_session
        memory = session.engine.memory
        memory.flush()
        assert memory.knowledge is not None and memory.knowledge.stats is not None
        assert memory.knowledge.stats.embedded == 0 and memory.knowledge.stats.unchanged > 0  # the lore: read
        before = len(model.texts)  # the new game's seeded Story Bible, before the save replaces it
        session.resume(slots.read("two"))
        memory.flush()  # the loaded memories restored: whatever they lacked is embedded now
        again = model.texts[before:]
        assert again == [], f"embedded again: {len(again)} texts of the save, e.g. {again[:3]}"

        result = session.play("say my name is Bram")
        assert result.ok and result.turn == 16
        assert turn_json(result)["retrieval_meta"]["strategy"] == "hybrid:chroma-reader"
        assert first.poll() is None and lock_is_held(data)  # played while the first game held the index
        assert len(model.texts) - before <= 4  # this turn's own texts (its query and its episode), nothing more
        session.close(save=True)
    finally:
        out, err = first.communicate("look\n", timeout=600)
    assert first.returncode == 0, err[-3000:]
    assert [orjson.loads(line)["turn"] for line in out.splitlines()] == [17]

    done = storyecho(
        "--slot", "two", "--data-dir", str(data), actions=["what is my name?", "load one", "what is my name?"]
    )
    assert "in use" not in done.stderr and "damaged" not in done.stderr
    two, loaded, one = turns(done)
    assert loaded["ok"] and loaded["meta"] == "load"
    for answer, mine, theirs in ((two, "bram", "ysolde"), (one, "ysolde", "bram")):
        assert answer["retrieval_meta"]["strategy"] == "hybrid:chroma"
        assert mine in answer["narration"].lower() and theirs not in orjson.dumps(answer).decode().lower()
