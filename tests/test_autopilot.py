"""The memory autopilot: a slow narrator's turns brought near the target by a smaller memory budget, and the
budget grown back when the narrator is fast again; told in the debug trace.

The slow narrator is a fake on purpose: the scripted narrator, waiting in proportion to the prompt it is sent,
as a model's prefill does. A real model's time (SmolLM2 on llama.cpp) is measured by ``bench/autopilot.py``.
"""

from __future__ import annotations

import time

import pytest

from game.config import ConfigError, load_settings
from game.engine.autopilot import FLOOR, RESERVE, Autopilot
from game.engine.pipeline import TurnPipeline
from game.llm.base import PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.wiring import make_engine
from game.world.loader import content_root, load_pack
from game.world.state import new_game

ACTIONS = ["go east", "talk to garrick", "ask garrick about hal", "ask garrick about silas", "look", "go west"]
ACTIONS += ["go north", "look", "go south", "go east", "ask garrick about wolves", "look"]


class Prefilling(ScriptedNarrator):
    """The scripted narrator, waiting ``seconds_per_token`` for each prompt token before it answers (a fake:
    the delay of a model's prefill, on demand)."""

    def __init__(self, pack, seconds_per_token: float) -> None:
        super().__init__(pack)
        self.seconds_per_token = seconds_per_token

    def narrate(self, bundle: PromptBundle) -> str:
        time.sleep(bundle.tokens * self.seconds_per_token)
        return super().narrate(bundle)


def test_a_slow_narrator_gets_a_smaller_memory_budget_and_a_fast_one_gets_it_back():
    pack = load_pack(content_root() / "fantasy_001")
    narrator = Prefilling(pack, seconds_per_token=0.0001)  # 1,000 tokens: 0.1 s
    memory = GameMemory(pack, narrator, background=False)
    autopilot = Autopilot(target_s=0.12, ceiling=4000)
    engine = TurnPipeline(
        pack, new_game(pack, seed=1), narrator, memory, prompt_budget_tokens=4000, autopilot=autopilot
    )
    slow = [engine.play(action) for action in ACTIONS]
    assert all(r.ok for r in slow)
    budgets = [r.trace.prompt.budget_tokens for r in slow]
    floors = [r.trace.prompt.required_tokens + RESERVE for r in slow]  # what each turn left memory at least
    assert budgets[0] == 4000 and budgets[-1] < 2500  # shrunk step by step...
    for before, after, floor in zip(budgets, budgets[1:], floors, strict=False):
        assert after <= max(before, floor)  # ...never grown while slow, but to keep memory's reserve...
        assert after >= floor  # ...which it always kept
    assert not slow[0].trace.prompt.cut and slow[-1].trace.prompt.cut  # memory was left out to send fewer tokens
    assert "budget 4000 -> 3400 tokens" in slow[0].trace.autopilot
    # ~1,800 tokens still take 0.18 s, over the 0.12 s target: memory's reserve holds
    assert "memory's reserve" in slow[-1].trace.autopilot or "->" in slow[-1].trace.autopilot
    assert autopilot.budget >= FLOOR

    narrator.seconds_per_token = 0.0  # a fast narrator: room again
    fast = [engine.play(action) for action in [*ACTIONS, *ACTIONS[:6]]]  # 18 turns: 10 steps up, and room
    assert fast[-1].trace.prompt.budget_tokens > budgets[-1]
    assert autopilot.budget == 4000
    memory.close()


def test_without_a_target_the_budget_never_moves_and_a_bad_target_is_refused(tmp_path):
    settings = load_settings(None, llm="scripted", data_dir=tmp_path, memory={"embeddings": False})
    engine = make_engine("fantasy_001", settings, embedder=False)
    assert engine.autopilot is None
    result = engine.play("look")
    assert result.trace.autopilot == "" and result.trace.prompt.budget_tokens == settings.budget_for("scripted")
    engine.memory.close()

    on = load_settings(None, llm="scripted", data_dir=tmp_path, memory={"embeddings": False}, turn_time_target_s=8)
    engine = make_engine("fantasy_001", on, embedder=False)
    assert engine.autopilot is not None and engine.autopilot.target_s == 8
    assert "budget stays" in engine.play("look").trace.autopilot  # the scripted narrator is far under 8 s
    engine.memory.close()
    for bad in (0, -1, "soon"):
        with pytest.raises(ConfigError, match="turn_time_target_s"):
            load_settings(None, llm="scripted", data_dir=tmp_path, turn_time_target_s=bad)
