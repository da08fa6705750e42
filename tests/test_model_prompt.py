"""Issue 42: the prompt gives a model what it needs: ids for everything the format offers, what waits beyond each
exit, and what the rules will add by themselves when the asked act is carried out.

The narrator here is ``tests.fakes.ScriptedAnswers``, a fake on purpose: it answers as a careful model would, with
the ids the prompt gives, so that a test can see what the prompt offered and what the rules made of it.
"""

from __future__ import annotations

import json

from game.engine.pipeline import TurnPipeline
from game.engine.prompt import fixed_blocks
from game.llm.scripted import ScriptedNarrator
from game.world.loader import content_root, load_pack
from game.world.state import QuestProgress, new_game
from tests.conftest import keyword_memory
from tests.fakes import ScriptedAnswers


def answer(narration: str, **effects) -> str:
    return json.dumps({"narration": narration, "choices": ["look"], "effects": effects, "memory_notes": []})


def at(pack, node: str, done: tuple[str, ...] = ()) -> TurnPipeline:
    state = new_game(pack, seed=3)
    state.node = node
    state.quests["mists_call"] = QuestProgress(objectives_done=list(done))
    return TurnPipeline(pack, state, ScriptedAnswers([]), keyword_memory(pack))


def node_info(engine: TurnPipeline) -> str:
    return next(b.text for b in fixed_blocks("look", engine.state, engine.pack) if b.name == "node_info")


def test_the_narrator_is_told_the_quest_an_act_completes_and_the_one_it_starts(fantasy):
    """Was: "talk to the princess" offered her cold greeting; the rules then completed "Into the Mist" and started
    the next quest, and the player read a challenge, then "Quest complete"."""
    engine = at(fantasy, "sanctuary_gate", ("meet_garrick", "reach_gate"))
    engine.narrator.answers.append(answer("Princess Alicia turns to you.", talk_to="alicia"))
    result = engine.play("talk to the princess")
    assert result.ok, result.error
    (bundle,) = engine.narrator.bundles
    action = next(b.text for b in bundle.blocks if b.name == "player_action")
    told = action.split("Rules' consequences (tell them): ", 1)[1]
    assert "Objective complete: Speak with Princess Alicia at the gate." in told
    assert "Into the Mist" in told and "New quest: The Guardian of Wisdom." in told
    assert engine.state.quests["mists_call"].status == "completed"  # what was told is what the rules did
    assert "words_of_wisdom" in engine.state.quests


def test_a_plain_act_with_no_consequence_adds_no_line(fantasy):
    engine = at(fantasy, "forest_edge")
    engine.narrator.answers.append(answer("You look around."))
    engine.play("look around")
    assert "Rules' consequences" not in engine.narrator.bundles[0].user


def test_each_exit_says_who_and_what_waits_there_and_the_danger(fantasy):
    """Was: exits gave only a name, so an arrival was told blind (a Mist Wolf at the destination unmentioned)."""
    text = node_info(at(fantasy, "forest_edge"))
    exits = next(line for line in text.splitlines() if line.startswith("Exits (move_to)"))
    assert "misty_path (north: Fogbound Path; there: Healing Herb, danger: Mist Wolf)" in exits
    assert "hunter_cabin (east: Old Hunter's Lodge; there: Old Garrick" in exits


def test_choices_and_side_quests_are_offered_by_id_where_they_can_be_used(fantasy):
    """Was: the format offered ``choice`` and ``trigger_side_quest`` but no prompt named an id to use."""
    throne = node_info(at(fantasy, "shadow_throne"))
    assert "Choices here (choice): negotiate (Parley with the Shadow Lord), join_shadow (" in throne
    assert "play_requiem (Play the Moonlit Requiem)" in throne
    assert "Choices here" not in node_info(at(fantasy, "forest_edge"))
    lodge = node_info(at(fantasy, "hunter_cabin"))
    assert "Side quests offered here (trigger_side_quest): find_hal (" in lodge


def test_a_choice_by_the_offered_id_is_carried_out(fantasy):
    engine = at(fantasy, "hunter_cabin")
    offered = node_info(engine).split("Side quests offered here (trigger_side_quest): ", 1)[1].split(" ", 1)[0]
    engine.narrator.answers.append(answer("Garrick tells you of Hal.", trigger_side_quest=offered))
    result = engine.play("I offer to help garrick find his son")
    assert result.ok and offered in engine.state.quests
    assert not [r for r in result.rejected if r.effect == "trigger_side_quest"]


def test_a_gifts_liking_is_the_rules_own_and_a_models_affinity_does_not_stack_on_it(fantasy):
    """Was: a gift's own affinity stacked with the model's (+3 told, +5 applied)."""
    engine = at(fantasy, "hunter_cabin")
    engine.state.affinity["old_hunter"] = 10
    gift = {"item": "waybread", "to": "old_hunter"}
    engine.narrator.answers.append(answer("Garrick takes the waybread.", give_item=gift, affinity={"old_hunter": 2}))
    result = engine.play("give the waybread to garrick")
    assert result.ok, result.error
    assert "(affinity +3)" in result.narration and engine.state.affinity["old_hunter"] == 13
    assert [r.reason for r in result.rejected if r.effect == "affinity"] == [
        "the gift already counts for how they feel"
    ]


PLUCK = "You pluck the clump of silverleaf from the roots. The fog stirs around your boots."


def test_a_telling_that_claims_a_take_the_rules_refused_is_mended_and_not_remembered(fantasy):
    """Was: after a refused take, a second answer that still told "you pluck the clump of silverleaf" was shown as
    it came (narration_replaced false), the herb stayed on the ground and the pluck went into memory."""
    engine = at(fantasy, "misty_path")
    engine.narrator.answers += [answer(PLUCK, items_gained=["healing_herb"]), answer(PLUCK)]
    held = engine.state.inventory.count("healing_herb")
    result = engine.play("I look at the herb")
    assert result.ok and engine.state.inventory.count("healing_herb") == held  # a look takes nothing
    assert "pluck" not in result.narration and "The fog stirs around your boots." in result.narration
    assert result.trace.unfounded and "take the Healing Herb" in result.trace.unfounded[0]
    (episode,) = engine.memory.last_episodes(1)
    assert "pluck" not in episode.narration


def test_a_telling_of_the_take_the_rules_carried_out_is_kept_whole(fantasy):
    engine = at(fantasy, "misty_path")
    engine.narrator.answers.append(answer(PLUCK, items_gained=["healing_herb"]))
    result = engine.play("take the herb")
    assert result.ok and result.narration.startswith(PLUCK) and not result.trace.unfounded


def test_a_telling_with_nothing_true_left_is_the_rules_account(fantasy):
    engine = at(fantasy, "misty_path")
    engine.narrator.answers += [answer("You pluck the silverleaf.", items_gained=["healing_herb"])]
    engine.narrator.answers += [answer("You pluck the silverleaf.")]
    result = engine.play("I look at the herb")
    assert result.ok and "pluck" not in result.narration and "Fogbound Path" in result.narration  # where you are


def test_the_built_in_narrator_never_tells_the_lamp_lit_while_it_stays_dark():
    """Was: in the Lamp Room with the burner still missing, "light the lamp" told "You light the lamp." and nothing
    was lit."""
    victorian = load_pack(content_root() / "victorian_001")
    state = new_game(victorian, seed=3)
    state.node = "lamp_room"
    engine = TurnPipeline(victorian, state, ScriptedNarrator(victorian), keyword_memory(victorian))
    for line in ("light the lamp", "I light the great lamp", "kindle the lamp"):
        result = engine.play(line)
        assert "you light" not in result.narration.lower() and not engine.state.ending
        assert result.narration.startswith("Not yet")


def test_the_prompt_budget_follows_the_narrator_and_its_cost(tmp_path):
    """Was: a capable endpoint got the small local models' 2,450 tokens; memory got a median of 282 and the window
    kept one exchange cut to 200 characters. Now an endpoint gets what its cost allows within its context."""
    from game.config import load_settings
    from game.wiring import make_engine

    def settings(**openai):
        base = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        return load_settings(None, llm="openai", data_dir=tmp_path, memory={"embeddings": False}, openai=base | openai)

    assert settings().budget_for("openai") == 6000
    assert settings(cost="low").budget_for("openai") == 2450 and settings(cost="high").budget_for("openai") == 7336
    assert settings(context_tokens=4096).budget_for("openai") == 4096 - 600 - 256
    assert settings().budget_for("scripted") == settings().budget_for("local") == 2450
    assert load_settings(None, prompt_budget_tokens=3000).budget_for("openai") == 3000  # the setting, when set
    endpoint = make_engine("fantasy_001", settings(), embedder=False, say=lambda _: None)
    assert endpoint.prompt_budget_tokens == 6000 and endpoint.memory.config.window_chars == 1200
    endpoint.memory.close()
    scripted = make_engine("fantasy_001", load_settings(None, llm="scripted", data_dir=tmp_path), embedder=False)
    assert scripted.prompt_budget_tokens == 2450 and scripted.memory.config.window_chars == 200
    scripted.memory.close()


def test_attacking_a_foe_not_yet_fought_strikes_the_first_blow_whoever_narrates(fantasy):
    """Was (relay game, issue 42): "attack the wolf" granted only ``start_combat``, so a model that proposed the
    act's effects alone opened the fight without a blow, while the built-in narrator struck one: the same words
    took a model one more turn, and every later step of the game came a turn late."""
    ends = []
    for narrator in ("model", "scripted"):
        engine = at(fantasy, "misty_path")
        if narrator == "model":
            engine.narrator.answers.append(answer("You lunge at the Mist Wolf.", start_combat="mist_wolf"))
        else:
            engine.narrator = ScriptedNarrator(fantasy)
        result = engine.play("attack the wolf")
        assert result.ok, result.error
        combat = engine.state.combat
        assert combat is not None and combat.enemy_id == "mist_wolf"
        assert combat.enemy_hp < fantasy.enemies["mist_wolf"].hp, narrator  # the first blow was struck
        ends.append((combat.enemy_hp, combat.rounds, engine.state.hp))
    assert ends[0] == ends[1]  # one game, whoever tells it


def test_a_model_recalling_the_players_own_promise_is_shown_as_told(fantasy):
    """Was: "You promised the old hunter you would bring Hal home." was sent back as speaking for the player."""
    engine = at(fantasy, "hunter_cabin")
    engine.narrator.answers += [
        answer('Garrick grips your arm. "Then bring him home."', talk_to="old_hunter"),
        answer("You promised the old hunter you would bring Hal home. The fire pops."),
    ]
    engine.play("tell garrick I will find hal")
    result = engine.play("what did I promise garrick?")
    assert result.ok, result.error
    assert not result.trace.spoke_for_player and not result.trace.narration_replaced
    assert result.narration.startswith("You promised the old hunter you would bring Hal home.")


def test_what_someone_told_in_a_models_own_prose_reaches_the_prompt_and_is_never_cut(fantasy):
    """Was (issue 42): a model told the talk in its own prose, so "what did garrick tell me about hal?" put the
    answer in the prompt 0 of 4 times at the default budget. The talk is read from the rules' record, and the best
    answer is never cut, even at a budget that leaves memory nothing else."""
    state = new_game(fantasy, seed=3)
    state.node = "hunter_cabin"
    engine = TurnPipeline(fantasy, state, ScriptedAnswers([]), keyword_memory(fantasy), prompt_budget_tokens=600)
    engine.narrator.answers.append(
        answer(
            "Garrick is quiet a long while. 'My boy went after a white stag three moons back,' he says, "
            "'and the mist kept him.'",
            talk_to="old_hunter",
        )
    )
    assert engine.play("ask garrick about his son hal").ok
    for n in range(12):
        engine.narrator.answers.append(answer(f"The fire burns low, hour {n}."))
        assert engine.play("wait a while").ok
    engine.narrator.answers.append(answer("You remember the hunter's words."))
    assert engine.play("what did garrick tell me about hal?").ok
    bundle = engine.narrator.bundles[-1]
    assert "white stag three moons back" in bundle.user
    assert not [c for c in bundle.cut if c.block == "relevant_memories" and "white stag" in c.text]


def test_the_round_told_ahead_is_the_round_the_rules_roll(fantasy):
    """Was (relay game): the narrator was told no consequence of a blow, a draught or a rest, so a model told the
    player striking first and the rules then said "The Cliff Harpy strikes before you are ready!". The dice are
    the seed's and the turn's: what the prompt tells ahead is what the rules then roll, line for line."""
    engine = at(fantasy, "misty_path")
    engine.narrator.answers += [
        answer("You lunge at the wolf.", start_combat="mist_wolf", combat_action="attack"),
        answer("You press the wolf.", combat_action="attack"),
        answer("You chew the herb.", use_item="healing_herb"),
    ]
    for action in ("attack the wolf", "attack", "eat the herb"):
        result = engine.play(action)
        assert result.ok, result.error
        told = next(b.text for b in engine.narrator.bundles[-1].blocks if b.name == "player_action")
        ahead = told.split("Rules' consequences (tell them): ", 1)[1]
        rolled = result.narration.split("\n")[1:]  # the rules' own lines, after the telling
        assert rolled and all(line in ahead for line in rolled), (action, ahead, rolled)
    first = next(b.text for b in engine.narrator.bundles[0].blocks if b.name == "player_action")
    assert "You strike the Mist Wolf for" in first and "The Mist Wolf strikes before you are ready!" in first


def test_a_first_arrival_is_told_with_the_place_and_a_return_is_not(fantasy):
    """Was (relay game): a move's prompt gave the destination's name and what waits there, never the place
    itself, so a model told a first arrival vaguely. A first visit carries the place's description as it stands;
    a return carries none (the place was told before)."""
    engine = at(fantasy, "forest_edge")
    engine.narrator.answers += [answer("You walk north.", move_to="misty_path"), answer("Back.", move_to="forest_edge")]
    engine.narrator.answers.append(answer("North again.", move_to="misty_path"))
    for action in ("go north", "go south", "go north"):
        assert engine.play(action).ok
    first, back, again = (next(b.text for b in n.blocks if b.name == "player_action") for n in engine.narrator.bundles)
    description = fantasy.nodes["misty_path"].description.split(".")[0]
    assert "arrives at Fogbound Path for the first time" in first and description in first
    assert "for the first time" not in again and description not in again
    assert "for the first time" not in back  # the trailhead was where the game began


def test_a_narrators_made_up_id_on_a_look_is_its_own_and_the_turn_still_passes(fantasy):
    """Was (found with SmolLM2 in the doctor): a model that proposed ``move_to: "nowhere"`` on a look had it refused
    as "no such place", told to the player as their own refusal ("There is no such place."), and the look cost no
    turn, so a weak model's whole game stood still and never consolidated. An id nothing names is the narrator's
    unless the player asked an act of that kind; then the rules say there is no such place, at no turn's cost."""
    engine = at(fantasy, "forest_edge")
    engine.narrator.answers += [answer("You look around.", move_to="nowhere"), answer("You look around.")]
    looked = engine.play("look around")
    assert looked.ok and not looked.free and engine.state.turn == 1
    assert "no such place" not in looked.narration.lower()
    assert [(r.effect, r.reason) for r in looked.rejected] == [("move_to", "not what you asked")]
    engine.narrator.answers += [answer("You go.", move_to="nowhere"), answer("You go.")]
    went = engine.play("go to nowhere")
    assert went.free and engine.state.turn == 1  # asked, refused by the rules, no turn spent
