"""A thing a person here is waiting for, named to them with no verb of giving, is asked back as the gift (issue 41,
``guess._awaited``).

Part 9 of the corpus, read once, found four gifts told with no verb of giving ("here is your memory, please take it
back", "the moonvine you wanted", "Miss Crane, I found your mother's locket. Please, have it."): each was read as a
word with the person, or as nothing. Round nine taught the lexicon the words that hand over; what carries to the
next writer is the scene: a person here waits for that very thing (a quest under way asks it of them), and the line
names it. So the gift is asked back ("Do you mean: give the Silver Locket to Ada Crane?"), never made on those
words alone. The sentences here are new; a question, a refusal or a supposition about the thing stays what it is.
"""

from __future__ import annotations

import pytest

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.memory.manager import GameMemory
from game.memory.settings import MemoryConfig
from tests.language.acts import shipped_packs, state_for
from tests.language.rows import Row

LOCKET = {"carried": ("maud_locket",), "started": ("mothers_locket",)}
SHARD = {"carried": ("memory_shard",), "started": ("kyoto_memory",), "stats": (("intelligence", 15),)}


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


def _engine(packs, story: str, at: str, **setup) -> TurnPipeline:
    pack = packs[story]
    memory = GameMemory(pack, ScriptedNarrator(pack), config=MemoryConfig(), background=False)  # type: ignore[arg-type]
    return TurnPipeline(pack, state_for(Row(story, at, "", (), "plain", **setup), pack), ScriptedNarrator(pack), memory)


@pytest.mark.parametrize(
    ("story", "at", "line", "setup", "question"),
    [
        (
            "victorian_001",
            "keepers_cottage",
            "Ada, look what turned up in the sea cave: your mother's locket",
            LOCKET,
            "Do you mean: give the Silver Locket to Ada Crane?",
        ),
        (
            "scifi_001",
            "lab_pod_bay",
            "voice? I've got the shard you were after",
            SHARD,
            "Do you mean: give the Memory Shard to The Voice?",
        ),
    ],
)
def test_a_thing_awaited_named_to_its_person_is_asked_back_as_the_gift(packs, story, at, line, setup, question):
    game = _engine(packs, story, at, **setup)
    asked = game.play(line)
    assert asked.asking and asked.narration == question and not asked.applied
    item = setup["carried"][0]
    game.play("yes")
    assert item not in game.state.inventory


@pytest.mark.parametrize(
    "line",
    [
        "where did your mother lose the locket?",  # a question
        "I won't part with the locket yet",  # a refusal
        "what if I kept the locket?",  # a supposition
    ],
)
def test_a_line_that_asks_nothing_of_the_thing_keeps_it(packs, line):
    game = _engine(packs, "victorian_001", "keepers_cottage", **LOCKET)
    result = game.play(line)
    assert not result.asking and "maud_locket" in game.state.inventory


def test_a_thing_no_one_here_waits_for_is_no_gift(packs):
    """Ada waits for the locket only once her quest is under way."""
    game = _engine(packs, "victorian_001", "keepers_cottage", carried=("maud_locket",))
    result = game.play("Ada, look what turned up in the sea cave: your mother's locket")
    assert not result.asking and "maud_locket" in game.state.inventory
