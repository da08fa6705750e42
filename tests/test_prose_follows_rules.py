"""The prose follows the rules: a player never reads about what the rules refused.

A narrator writes before the rules run. When the rules refuse part of its
answer the turn is asked again, once, with the refusals (the same prompt, no
new recall); if the answer still proposes what was refused, the player reads
the rules' own account instead. Refusals reach the player as plain sentences;
effect names stay in the trace. Choices are read from the state after the
turn.
"""

from __future__ import annotations

import json

from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.llm.tellings import TELLINGS, opening
from game.world.choices import choices_after
from game.world.loader import content_root, load_pack
from game.world.state import CombatState, new_game
from tests.conftest import keyword_memory
from tests.fakes import ScriptedAnswers, network_down
from tests.test_cli import run_cli


def answer(narration: str, **effects) -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects, "memory_notes": []})


def engine(pack, narrator):
    return TurnPipeline(pack, new_game(pack, seed=3), narrator, keyword_memory(pack))


def test_the_scripted_narrator_never_narrates_a_refused_move():
    fantasy = load_pack(content_root() / "fantasy_001")
    game = engine(fantasy, ScriptedNarrator(fantasy))
    result = game.play("climb the tree")
    assert result.ok and game.state.node == fantasy.story.start_node
    arriving = {opening(v.format(place="Heart of the Tree")) for v in TELLINGS["arrive"]}
    assert opening(result.narration) not in arriving and "Heart of the Tree is not reachable" in result.narration
    assert result.trace.reasked and [r.effect for r in result.trace.first_rejected] == ["move_to"]
    assert [r.effect for r in result.rejected] == ["move_to"]  # the turn's refusals, in the trace and --json
    assert not result.trace.narration_replaced  # the second answer told the refusal itself


def test_a_corrected_answer_is_used(mini_pack):
    narrator = ScriptedAnswers(
        [
            answer("You stride onto the bridge and take the troll's crown.", move_to="bridge", items_gained=["crown"]),
            answer("The bridge is too far; you stay at camp and look north.", move_to=None),
        ]
    )
    game = engine(mini_pack, narrator)
    result = game.play("go to the bridge and take the crown")
    assert result.narration.startswith("The bridge is too far")
    assert game.state.node == "camp" and "crown" not in game.state.inventory
    second = narrator.bundles[-1]
    assert {(r.effect, r.value) for r in second.refused} == {("move_to", "bridge"), ("items_gained", "crown")}
    assert "The game rules refused" in second.messages[-1]["content"]  # the same prompt, told why
    assert not result.trace.narration_replaced


def test_an_answer_that_still_claims_refused_effects_is_replaced_by_the_rules_account(mini_pack):
    claim = answer("You stride onto the bridge and lift the crown.", move_to="bridge", items_gained=["crown"])
    game = engine(mini_pack, ScriptedAnswers([claim, claim]))
    result = game.play("go to the bridge and take the crown")
    assert "stride" not in result.narration and "lift" not in result.narration
    assert "Troll Bridge is not reachable from here." in result.narration
    assert "There is no Troll Crown here." in result.narration
    assert "move_to" not in result.narration and "items_gained" not in result.narration
    assert result.trace.narration_replaced and {r.effect for r in result.rejected} == {"move_to", "items_gained"}
    assert game.state.node == "camp"


def test_a_failed_second_answer_keeps_what_was_allowed_and_tells_the_rest(mini_pack):
    first = answer("You walk north into the woods, then leap to the tower.", move_to="tower")
    game = engine(mini_pack, ScriptedAnswers([first, network_down()]))
    result = game.play("go to the tower")
    assert result.ok and game.state.node == "camp"
    assert "leap" not in result.narration and "not reachable" in result.narration
    assert any("asking again failed" in e for e in result.trace.validation_errors)


def test_an_allowed_turn_is_asked_once(mini_pack):
    narrator = ScriptedAnswers([answer("You walk north into the woods.", move_to="woods")])
    game = engine(mini_pack, narrator)
    result = game.play("go north")
    assert len(narrator.bundles) == 1 and not result.trace.reasked and game.state.node == "woods"


def test_choices_are_read_from_the_state_after_the_turn(mini_pack):
    state = new_game(mini_pack, seed=3)
    state.node = "woods"
    proposed = ["attack Grey Wolf", "flee", "take Iron Sword", "go east"]
    state.flags.append("defeated:wolf")
    after = choices_after(proposed, state, mini_pack)
    assert "flee" not in after and not any(c.startswith("attack Grey") for c in after)
    assert "go east" in after
    state.combat = CombatState(enemy_id="troll", enemy_hp=10)
    assert choices_after(["go east", "talk to sage"], state, mini_pack)[:1] == ["attack"]
    assert "flee" not in choices_after(["flee"], state, mini_pack)  # the troll is a boss: no escaping it (issue 35)
    state.combat, state.ending = None, "victory"
    assert choices_after(proposed, state, mini_pack) == []


def test_the_player_reads_plain_sentences_never_effect_names(tmp_path):
    done = run_cli(
        "run",
        "--story",
        "fantasy_001",
        "--no-embeddings",
        stdin="climb the tree\ntake the longbow\n",
        data_dir=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Heart of the Tree is not reachable from here." in done.stdout
    assert "There is no Royal Yew Longbow here." in done.stdout
    for internal in ("move_to", "items_gained", "refused:"):
        assert internal not in done.stdout
