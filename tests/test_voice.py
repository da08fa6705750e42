"""The narrator does not speak or decide for the player, nor repeat itself (issue 31, part 4).

The corpus (``tests/voice_corpus.py``) is measured both ways, the scripted narrator's own tellings over every
walkthrough are never caught, and the turn pipeline asks a narrator that speaks for the player, or a model that
repeats its last turns, once more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.voice import REPEAT_THRESHOLD, mended, repeats, sentences, speaks_for_player
from game.llm.base import PromptBundle
from game.llm.scripted import ScriptedNarrator
from game.tui.debug_data import DebugData
from game.tui.debug_render import render_output
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.fakes import ScriptedAnswers
from tests.voice_corpus import FRESH, PASSES, REPEATS, SPEAKS

WALKTHROUGHS = sorted((Path(__file__).parent / "walkthroughs").glob("*__*.txt"))
SPOKEN = [
    # the walkthroughs never speak: what the scripted narrator tells of a player who does
    "say hello",
    "talk to garrick",
    "tell garrick my name is Kael",
    "ask garrick about hal",
    "I agree to help you",
    "yes",
    "no thanks",
    "I promise to find hal",
    "shout for help",
    "kneel",
    "I will never kneel",
    '"Who goes there?" I call out',
]
STOCK = ("You try to ", "There is no time for that")
"""The scripted narrator's answers to an act that cannot be done here, the same whatever the act."""


def answer(narration: str, **effects) -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects, "memory_notes": []})


@dataclass
class _Call:
    prompt_tokens: int | None = None


class ModelAnswers(ScriptedAnswers):
    """Fake model narrator: the given answers in order, each reported as a model call (as an endpoint's are)."""

    def narrate(self, bundle: PromptBundle) -> str:
        self.last_call = _Call()
        return super().narrate(bundle)


def engine(pack, narrator):
    return TurnPipeline(pack, new_game(pack, seed=3), narrator, keyword_memory(pack))


# ------------------------------------------------------------------ the corpus
def test_every_narration_that_speaks_for_the_player_is_caught():
    missed = [(n, a) for n, a in SPEAKS if speaks_for_player(n, a) is None]
    assert len(SPEAKS) >= 60 and not missed, f"missed {len(missed)} of {len(SPEAKS)}: {missed}"


def test_no_narration_that_leaves_the_player_their_voice_is_caught():
    caught = [(n, a, speaks_for_player(n, a)) for n, a in PASSES if speaks_for_player(n, a) is not None]
    assert len(PASSES) >= 60 and not caught, f"false flags {len(caught)} of {len(PASSES)}: {caught}"


def test_the_caught_sentence_is_the_one_that_speaks_and_only_it_is_dropped():
    narration = 'The fire crackles. You say, "I will find him." Garrick nods slowly.'
    assert sentences(narration) == ["The fire crackles.", 'You say, "I will find him."', "Garrick nods slowly."]
    assert speaks_for_player(narration, "look") == 'You say, "I will find him."'
    assert mended(narration, "look") == "The fire crackles. Garrick nods slowly."
    assert speaks_for_player(narration, "tell garrick I will find hal") is None


def test_repetitions_of_the_last_three_tellings_reach_the_threshold_and_new_tellings_do_not():
    low = [(round(repeats(n, p), 2), n) for n, p in REPEATS if repeats(n, p) < REPEAT_THRESHOLD]
    high = [(round(repeats(n, p), 2), n) for n, p in FRESH if repeats(n, p) >= REPEAT_THRESHOLD]
    assert len(REPEATS) >= 20 and not low, f"repetitions under {REPEAT_THRESHOLD}: {low}"
    assert len(FRESH) >= 20 and not high, f"new tellings at or over {REPEAT_THRESHOLD}: {high}"
    assert repeats(REPEATS[0][0], []) == 0.0  # nothing told before: nothing repeated


def _script(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


PLAYS = [(p.stem.split("__")[0], _script(p), p.stem) for p in WALKTHROUGHS]
PLAYS += [(story, SPOKEN, f"{story}__spoken") for story in ("fantasy_001", "scifi_001")]


@pytest.mark.parametrize(("story", "actions"), [p[:2] for p in PLAYS], ids=[p[2] for p in PLAYS])
def test_the_scripted_narrator_is_never_caught(story, actions):
    """Over every walkthrough (and lines that speak, which the walkthroughs do not) it never speaks for the player,
    and the pipeline never judges its repetitions (``TurnPipeline._judge``: it makes no model call). The few
    tellings that do repeat the last ones are its stock answers to an act that cannot be done here."""
    pack = load_pack(content_root() / story)
    game = engine(pack, ScriptedNarrator(pack))
    told: list[str] = []
    caught, stock = [], []
    for action in actions:
        result = game.play(action)
        if result.meta or not result.ok:
            continue
        prose = json.loads(result.trace.raw_output)["narration"]
        if speaks_for_player(prose, action) or (
            repeats(prose, told) >= REPEAT_THRESHOLD and not prose.startswith(STOCK)
        ):
            caught.append((action, prose))
        stock += [prose] if repeats(prose, told) >= REPEAT_THRESHOLD else []
        assert not result.trace.spoke_for_player and not result.trace.repeated
        told.append(result.narration)
    assert len(told) >= len(SPOKEN) - 2 and not caught, caught
    assert len(stock) <= 2, stock


# ------------------------------------------------------------------ the turn pipeline
def test_a_narrator_that_agrees_for_the_player_is_asked_again_and_the_second_answer_used(fantasy):
    """Was: "You agree to his terms." after "look" was told as it came."""
    narrator = ScriptedAnswers([answer("You agree to his terms."), answer("The lodge is quiet; the fire crackles.")])
    result = engine(fantasy, narrator).play("look")
    assert result.ok and result.narration.startswith("The lodge is quiet; the fire crackles.")
    assert "agree" not in result.narration
    assert result.trace.spoke_for_player and result.trace.reasked and not result.trace.repeated
    assert not result.trace.narration_replaced and not result.rejected
    assert len(narrator.bundles) == 2
    asked = narrator.bundles[1].messages[-1]["content"]
    assert "You agree to his terms." in asked and "for the player" in asked
    shown = render_output(DebugData.from_result(result)).plain  # the debug panel's Output tab says so
    assert "asked again, spoke for the player" in shown


def test_a_second_answer_that_still_speaks_for_the_player_loses_that_sentence(fantasy):
    offending = answer('Mist curls around the trailhead. You say, "I will serve you." An owl calls.')
    narrator = ScriptedAnswers([offending, offending])
    result = engine(fantasy, narrator).play("look")
    assert result.ok and result.narration.startswith("Mist curls around the trailhead. An owl calls.")
    assert "serve" not in result.narration and result.trace.spoke_for_player and len(narrator.bundles) == 2


def test_a_second_answer_that_is_all_the_players_words_gives_the_rules_account(fantasy):
    narrator = ScriptedAnswers([answer("You kneel."), answer("You agree to his terms.")])
    result = engine(fantasy, narrator).play("look")
    assert result.narration.startswith("Mistwood Trailhead.") and result.trace.narration_replaced


def test_when_asking_again_fails_the_first_answer_stands_without_the_players_words(fantasy):
    first = answer("You step into the fog. You promise Garrick you will find Hal.", move_to="misty_path")
    narrator = ScriptedAnswers([first, ConnectionError("endpoint down")])
    game = engine(fantasy, narrator)
    result = game.play("go north")
    assert result.ok and game.state.node == "misty_path"  # the rules accepted the move: it stays
    assert result.narration.startswith("You step into the fog.") and "promise" not in result.narration


def test_a_model_that_repeats_its_last_turn_is_asked_again_once(fantasy):
    told = "Fog curls between the pines, and a hunter's lodge squats to the east, smoke rising from its chimney."
    fresh = "You wait. Somewhere beyond the lodge a dog barks twice, then falls silent in the fog."
    narrator = ModelAnswers([answer(told), answer(told), answer(fresh)])
    game = engine(fantasy, narrator)
    first = game.play("look")
    assert not first.trace.repeated and not first.trace.reasked
    second = game.play("wait")
    assert second.trace.repeated and second.trace.reasked and not second.trace.spoke_for_player
    assert second.narration.startswith(fresh) and len(narrator.bundles) == 3
    assert "repeats the last turns" in narrator.bundles[2].messages[-1]["content"]


def test_a_repetition_asked_again_that_repeats_still_is_kept(fantasy):
    told = "Fog curls between the pines, and a hunter's lodge squats to the east, smoke rising from its chimney."
    narrator = ModelAnswers([answer(told), answer(told), answer(told)])
    game = engine(fantasy, narrator)
    game.play("look")
    result = game.play("look")
    assert result.ok and result.narration.startswith(told) and result.trace.repeated
    assert len(narrator.bundles) == 3 and not result.trace.narration_replaced  # asked once, then kept


def test_a_narrator_that_makes_no_model_call_is_not_asked_again_for_repeating(fantasy):
    """The scripted narrator is deterministic: asking it again would tell the same words."""
    told = "Fog curls between the pines, and a hunter's lodge squats to the east, smoke rising from its chimney."
    narrator = ScriptedAnswers([answer(told), answer(told)])
    game = engine(fantasy, narrator)
    game.play("look")
    result = game.play("look")
    assert result.narration.startswith(told) and len(narrator.bundles) == 2
    assert not result.trace.repeated and not result.trace.reasked


def test_a_refusal_and_a_voice_fault_are_told_in_one_second_asking(fantasy):
    ahead = answer("You agree to his terms and stroll north.", move_to="misty_path")
    narrator = ScriptedAnswers([ahead, answer("You look around the trailhead.")])
    game = engine(fantasy, narrator)
    result = game.play("look")
    asked = narrator.bundles[1].messages[-1]["content"]
    assert "refused" in asked and "for the player" in asked and len(narrator.bundles) == 2
    assert result.trace.spoke_for_player and game.state.node == "forest_edge"
    assert result.narration.startswith("You look around the trailhead.")


RECALLED = ["talk to garrick", "ask garrick about hal", "tell garrick I will find hal"]


def test_a_recollection_of_what_the_player_did_say_is_theirs_and_an_invented_one_is_not():
    """Was (issue 42): "You promised the old hunter you would bring Hal home." was sent back as speaking for the
    player although they had promised it; it is allowed when an earlier action grounds it, and still caught when
    none does (the earlier actions are read only for a sentence told in the past)."""
    promise = "You promised the old hunter you would bring Hal home."
    assert speaks_for_player(promise, "what did I promise garrick?", lambda: RECALLED) is None
    assert speaks_for_player(promise, "what did I promise garrick?") == promise
    assert speaks_for_player(promise, "look", lambda: ["talk to garrick", "go north"]) == promise
    asked = "You asked Garrick about his son, and he told you everything."
    assert speaks_for_player(asked, "look", lambda: RECALLED) is None
    assert speaks_for_player(asked, "look", lambda: ["go north", "take the herb"]) == asked
    now = "You promise Garrick you will bring Hal home."  # a promise made now, in the present: not a recollection
    assert speaks_for_player(now, "look", lambda: RECALLED) == now
    read = []
    assert speaks_for_player("Mist curls around you.", "look", lambda: read.append(1) or RECALLED) is None
    assert not read  # nothing recalled: the log is not read


def test_buying_from_a_person_is_asking_them():
    """Was (issue 42): "You ask Old Garrick for the Healing Herb." on "I buy a healing herb from garrick" was shown
    under "the rules refused part of the narrator's draft"."""
    assert speaks_for_player("You ask Old Garrick for the Healing Herb.", "I buy a healing herb from garrick") is None
    assert speaks_for_player("You ask Old Garrick for the Healing Herb.", "look at the herb") is not None
