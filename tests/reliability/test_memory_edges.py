"""Memory at its edges (issue 22, item 3): a load never waits for a slow summarizer, and nothing of an abandoned
timeline reaches the loaded game."""

from __future__ import annotations

import threading
import time

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game

FANTASY = load_pack(content_root() / "fantasy_001")


class SlowFirstSummary(ScriptedNarrator):
    """The scripted narrator, whose first summary call waits until released (a slow model; fault injection)."""

    def __init__(self, pack):
        super().__init__(pack)
        self.started = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def summarize(self, text: str, max_words: int = 60) -> str:
        self.calls += 1
        if self.calls == 1:
            self.started.set()
            self.release.wait(timeout=60)
        return super().summarize(text, max_words)


def test_a_load_during_a_slow_summary_does_not_wait_and_never_receives_it(tmp_path):
    """Was: the load blocked 60 s, then the loaded turn-3 game received the abandoned timeline's summary of turns
    1-5 (at a place that branch never visited), and its own turns 4-5 were never summarised."""
    narrator = SlowFirstSummary(FANTASY)
    memory = GameMemory(FANTASY, narrator)
    session = GameSession(TurnPipeline(FANTASY, new_game(FANTASY, seed=1), narrator, memory), SlotStore(tmp_path))
    for action in ("look", "look", "look"):
        session.play(action)
    session.save("turn3")
    for action in ("go east", "look"):  # the abandoned timeline: at the lodge
        session.play(action)
    assert narrator.started.wait(10), "the consolidation of turns 1-5 started"
    started = time.monotonic()
    session.load("turn3")
    assert time.monotonic() - started < 5  # did not wait for the slow summary
    narrator.release.set()
    for action in ("go north", "look"):  # this timeline's turns 4-5: on the Fogbound Path
        session.play(action)
    memory.flush()
    summaries = memory.state.summaries
    assert [(s.first_turn, s.turn) for s in summaries] == [(1, 5)]
    assert summaries[0].node == "Fogbound Path" and "Lodge" not in summaries[0].text
    assert all("Lodge" not in e.content for e in memory.state.bible if e.source == "consolidation")
    session.close()
