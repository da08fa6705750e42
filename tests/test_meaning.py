"""A verb the lexicon lacks, matched by meaning with the game's own embedder (issue 41): offered, never applied.

The real ONNX all-MiniLM-L6-v2 embedder the game uses by default. Measured over sixteen verbs the lexicon lacks
("traipse", "mosey", "scarper", "purloin", "snaffle", "pinch", "thwack", "bop", "nosh", "sup", "kip", "hurl",
"flog", "peddle", "natter", "gander"): one guessed ("traipse": go), none wrong, and no guess for ten words that are
no game verb (names, "dance", "kneel", "pray", "wonder"). The thresholds trade recall for never offering nonsense.
"""

from __future__ import annotations

import pytest

from game.engine.pipeline import TurnPipeline
from game.language.meaning import VerbMeanings
from game.llm.scripted import ScriptedNarrator
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory


@pytest.fixture(scope="module")
def meanings() -> VerbMeanings:
    from game.memory.vectors.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder()
    embedder.load()
    return VerbMeanings(embedder.embed)


def test_an_unknown_verb_near_a_known_one_is_guessed(meanings):
    assert meanings.guess("traipse") == "go"


@pytest.mark.parametrize("word", ["garrick", "alicia", "dance", "kneel", "pray", "wonder", "herb", "north"])
def test_a_word_that_means_no_game_verb_is_never_guessed(meanings, word):
    assert meanings.guess(word) is None


def test_the_guess_is_offered_and_only_a_yes_applies_it(meanings):
    pack = load_pack(content_root() / "fantasy_001")
    game = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack), meaning=meanings.guess)
    asked = game.play("traipse north")
    assert asked.asking and asked.narration == "Do you mean: go to the Fogbound Path?" and game.state.turn == 0
    assert game.state.node == "forest_edge"
    moved = game.play("yes")
    assert game.state.node == "misty_path" and ("move_to", "misty_path") in [
        (a.effect, a.detail) for a in moved.applied
    ]
