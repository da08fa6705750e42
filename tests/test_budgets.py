"""Budgets in characters: whatever a player types or a model writes, what memory keeps stays small."""

from __future__ import annotations

import json

from game.engine.pipeline import MAX_ACTION_CHARS, TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.text import clip
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.fakes import FlakySummarizer, ScriptedAnswers


def test_clip_cuts_at_a_space_or_through_a_giant_word():
    assert clip("short", 10) == "short"
    assert clip("one two three four five", 12) == "one two…"
    assert len(clip("x" * 10_000, 50)) == 50


def test_a_giant_word_never_fills_the_synopsis(mini_pack):
    copier = FlakySummarizer(failures=0)  # a summarizer that keeps the first words of its text, the giant one too
    memory = GameMemory(mini_pack, copier, background=False)
    game = TurnPipeline(mini_pack, new_game(mini_pack, seed=3), ScriptedNarrator(mini_pack), memory)
    word = "a" * (MAX_ACTION_CHARS - 10)
    for action in [f"say {word}", "look", "look", "look", "look", "look"]:
        assert game.play(action).ok
    summary, synopsis = memory.state.summaries[-1].text, memory.state.synopsis
    assert word[:100] in summary + synopsis  # it was summarised, and cut
    assert len(summary) <= memory.config.summary_chars and len(synopsis) <= memory.config.synopsis_chars
    system = game.play("look").trace.prompt.system
    assert len(system.split("Previously: ", 1)[1]) <= memory.config.synopsis_chars


def test_a_model_that_writes_a_chapter_is_logged_within_budget(mini_pack):
    chapter = "The wind howls. " * 600  # 9,600 characters of narration
    answer = json.dumps({"narration": chapter, "choices": [], "effects": {}, "memory_notes": []})
    game = TurnPipeline(mini_pack, new_game(mini_pack, seed=3), ScriptedAnswers([answer]), keyword_memory(mini_pack))
    result = game.play("listen")
    assert result.ok
    logged = game.memory.state.log[-1].narration
    assert len(logged) <= game.memory.config.narration_chars and logged.startswith("The wind howls.")
