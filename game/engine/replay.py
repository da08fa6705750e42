"""``storyecho content replay``: an author's regression test, as Inform's Skein is (issue 34).

An approved transcript is what ``storyecho run`` prints: each turn a ``> action`` line, then what the game told
(the narration and the offered choices). Replaying plays the same actions in a new game of the story with the
scripted narrator, keyword memory and the same seed, and compares each turn's telling with the approved one; the
first turn that differs is shown as a diff, so an author sees what their last change did to a path they approved.
``--approve`` writes a transcript from a list of actions (or re-approves one after a change the author wants).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from game.engine.pipeline import TurnPipeline
from game.engine.results import TurnResult
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from game.text import visible
from game.world.content import ContentPack
from game.world.state import new_game

PROMPT = "> "


@dataclass
class Step:
    """One approved turn: the action and the lines the game told after it."""

    action: str
    told: list[str] = field(default_factory=list)


@dataclass
class Replayed:
    """What a replay found: the turns that matched and the first difference (none when all matched)."""

    matched: int
    total: int
    difference: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.difference


def told(result: TurnResult) -> list[str]:
    """What the game told after a turn, line by line, as ``storyecho run`` prints it (controls made visible)."""
    text = f"{result.narration}\n"
    if result.choices:
        text += "  Choices: " + " | ".join(result.choices) + "\n"
    return visible(text).rstrip("\n").split("\n")


def read_transcript(text: str) -> list[Step]:
    """The approved turns of a transcript (``storyecho run``'s output); lines before the first action are ignored,
    blank lines between turns are not part of a telling. A file of bare actions (no ``>``) has empty tellings."""
    lines = text.splitlines()
    if not any(line.startswith(PROMPT) for line in lines):
        return [Step(line.strip()) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    steps: list[Step] = []
    for line in lines:
        if line.startswith(PROMPT):
            steps.append(Step(line[len(PROMPT) :].strip()))
        elif steps:
            steps[-1].told.append(line)
    for step in steps:
        while step.told and not step.told[-1].strip():
            step.told.pop()
    return steps


def write_transcript(steps: Iterable[Step]) -> str:
    return "".join(f"\n{PROMPT}{step.action}\n" + "".join(f"{line}\n" for line in step.told) for step in steps)


def play(pack: ContentPack, actions: Iterable[str], *, seed: int = 0) -> list[Step]:
    """The actions played in a new game (scripted narrator, keyword memory, ``seed``), up to an ending."""
    narrator = ScriptedNarrator(pack)
    memory = GameMemory(pack, narrator, config=MemoryConfig(), background=False)
    pipeline = TurnPipeline(pack, new_game(pack, seed=seed), narrator, memory)
    out: list[Step] = []
    try:
        for action in actions:
            out.append(Step(action, told(pipeline.play(action))))
            if pipeline.state.ending:
                break
    finally:
        memory.close()
    return out


def replay(pack: ContentPack, approved: list[Step], *, seed: int = 0) -> Replayed:
    """Play ``approved``'s actions and compare each turn with what was approved; stop at the first difference."""
    played = play(pack, (step.action for step in approved), seed=seed)
    for number, (want, got) in enumerate(zip(approved, played, strict=False), 1):
        if want.told != got.told:
            diff = difflib.unified_diff(want.told, got.told, "approved", "now", lineterm="", n=2)
            head = f"turn {number} differs: > {want.action}"
            return Replayed(number - 1, len(approved), [head, *diff])
    if len(played) < len(approved):
        ended = f"the story ended at turn {len(played)}; the transcript goes on to turn {len(approved)}"
        return Replayed(len(played), len(approved), [ended, f"next approved action: > {approved[len(played)].action}"])
    return Replayed(len(approved), len(approved))
