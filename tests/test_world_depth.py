"""A world worth poking at (issue 25): scenery that answers ``examine`` and changes with the story, things a
scene shows that cannot be taken say why, choices that show every open way and an ending's key actions, and
lines that do nothing cost no turn. Each test failed before the change it names."""

from __future__ import annotations

import pytest

from game.checker.analysis import check_pack
from game.engine.pipeline import TurnPipeline
from game.llm.scripted import ScriptedNarrator
from game.world.choices import choices_after, suggested
from game.world.content import ContentPack, Npc
from game.world.effects import Effects
from game.world.rules import Rules
from game.world.state import GameState, QuestProgress, new_game
from tests.conftest import keyword_memory


def pipeline(pack: ContentPack, state: GameState | None = None) -> TurnPipeline:
    state = state or new_game(pack, seed=3)
    return TurnPipeline(pack, state, ScriptedNarrator(pack), keyword_memory(pack))


def at(pack: ContentPack, node: str, *flags: str) -> GameState:
    state = new_game(pack, seed=3)
    state.node = node
    for flag in [f"visited:{node}", *flags]:
        state.add_flag(flag)
    return state


# ---------------------------------------------------------------- examine
def test_the_spring_answers_examine_and_looks_healed_once_healed(fantasy):
    sick = pipeline(fantasy, at(fantasy, "silver_spring")).play("x spring")
    assert sick.ok and "nothing remarkable" not in sick.narration
    assert "black" in sick.narration and "ink" in sick.narration
    healed = pipeline(fantasy, at(fantasy, "silver_spring", "used:sap_dewdrop@silver_spring")).play("examine spring")
    assert "ink" not in healed.narration and "clear" in healed.narration


def test_the_breaker_shows_its_empty_socket_then_the_seated_fuse(scifi):
    empty = pipeline(scifi, at(scifi, "distribution_room")).play("x breaker")
    assert "nothing remarkable" not in empty.narration and "empty" in empty.narration
    seated = pipeline(scifi, at(scifi, "distribution_room", "used:ceramic_fuse@distribution_room")).play("x socket")
    assert "snug" in seated.narration and "empty" not in seated.narration


def test_a_milestone_and_any_word_of_the_scene_answer_examine(fantasy):
    game = pipeline(fantasy)
    assert "KING'S ROAD ENDS" in game.play("examine the milestone").narration
    threads = pipeline(fantasy, at(fantasy, "silver_spring")).play("look at the ferns")
    assert "withered grey" in threads.narration  # no feature of its own: the scene's own sentence about it
    assert "nothing remarkable" in game.play("examine the dragon").narration  # what the scene does not name


# ------------------------------------------------------------ take, use
def test_the_bow_over_the_hearth_cannot_be_taken_and_the_refusal_says_why(fantasy):
    game = pipeline(fantasy, at(fantasy, "hunter_cabin"))
    result = game.play("take the bow")
    assert "Garrick's" in result.narration and "There is no" not in result.narration
    assert "garricks_longbow" not in game.state.inventory
    assert "hearth" in game.play("x bow").narration
    gone = pipeline(fantasy, at(fantasy, "hunter_cabin", "obtained:garricks_longbow")).play("take the bow")
    assert "Garrick's; he won't" not in gone.narration  # given away: the bow is no longer over the hearth


def test_scenery_the_text_names_is_refused_as_scenery(fantasy):
    result = pipeline(fantasy, at(fantasy, "hunter_cabin")).play("take the antlers")
    assert "part of Old Hunter's Lodge" in result.narration


def test_drinking_from_the_sick_spring_hurts_and_from_the_healed_one_does_not(fantasy):
    sick = pipeline(fantasy, at(fantasy, "silver_spring"))
    hp = sick.state.hp
    result = sick.play("drink from the spring")
    assert result.ok and "sick" in result.narration and sick.state.hp == hp - 5
    healed = pipeline(fantasy, at(fantasy, "silver_spring", "used:sap_dewdrop@silver_spring"))
    result = healed.play("drink from the spring")
    assert "moonlight" in result.narration and healed.state.hp == hp


def test_wearing_armour_says_what_it_does(scifi):
    state = at(scifi, "freight_lift")
    state.inventory.append("kevlar_jacket")
    result = pipeline(scifi, state).play("wear the jacket")
    assert "You use the" not in result.narration and "+2 defence" in result.narration


def test_status_uses_the_name_the_player_gave(fantasy):
    game = pipeline(fantasy)
    assert game.play("status").narration.startswith("Traveller")
    assert game.play("my name is kael").ok
    assert game.state.player_name == "Kael"
    assert game.play("status").narration.startswith("Kael - level")


# --------------------------------------------------------------- choices
def test_choices_at_the_trailhead_show_every_way_out(fantasy):
    shown = choices_after([], new_game(fantasy, seed=1), fantasy)
    assert {"go north", "go east", "go west"} <= set(shown)


@pytest.mark.parametrize(("node", "quest", "items"), [("security_hub", None, ()), ("neon_crossing", "helix_tower", ())])
def test_the_main_quest_way_north_is_offered(scifi, node, quest, items):
    state = at(scifi, node, "visited:black_market", "visited:ripper_clinic")
    if quest:  # the tower is the quest under way: its way comes first, before the ramen and the drone
        state.quests = {q: QuestProgress(status="completed") for q in scifi.story.main_quest_order[:4]}
        state.quests[quest] = QuestProgress()
        state.inventory.append("tower_keycard")
        assert "go north" not in choices_after([], at(scifi, node), scifi)  # no keycard: the way is shut
    assert "go north" in choices_after([], state, scifi)


def test_a_way_a_guard_blocks_is_not_offered_and_a_narrators_offer_of_it_is_dropped(fantasy):
    state = at(fantasy, "shadow_gate")
    assert "go north" not in suggested(state, fantasy)
    assert "go north" not in choices_after(["go north", "look around"], state, fantasy)
    state.add_flag("defeated:shadow_knight")
    assert "go north" in choices_after([], state, fantasy)


def test_an_endings_key_actions_are_offered_when_they_would_succeed_and_each_makes_its_choice(fantasy):
    state = at(fantasy, "shadow_throne")
    state.inventory.append("moonlight_harp")
    early = choices_after(["attack the shadow lord", "go south", "flee", "look"], state, fantasy)
    parley, offer, requiem = (fantasy.choice(c) for c in ("negotiate", "join_shadow", "play_requiem"))
    assert offer.name in early and requiem.name in early  # before a narrator's four ideas
    assert parley.name not in early  # it would not succeed yet: the rules would take it back
    state.quests = {q: QuestProgress(status="completed") for q in ("purifying_spring", "free_thieves")}
    peace = next(e for e in fantasy.endings if e.id == "peace")  # its stat gate, as balanced (issue 35)
    state.intelligence, state.affinity["silas"] = peace.condition.min_stats["intelligence"], 50
    shown = choices_after([], state, fantasy)
    assert {parley.name, offer.name, requiem.name} <= set(shown)
    for choice in fantasy.story.choices:
        game = pipeline(fantasy, state.model_copy(deep=True))
        game.play(choice.name)
        assert game.state.has_flag(f"choice:{choice.id}") and game.state.ending, choice.name


def test_the_cyber_endings_key_actions_are_offered_when_they_are_possible(scifi):
    state = at(scifi, "data_core", "talked:kage")
    shown = choices_after([], state, scifi)
    assert scifi.choice("pact").name in shown and scifi.choice("reboot").name not in shown  # reboot needs more


# ------------------------------------------------------------ no turn spent
def test_going_where_you_already_are_says_so(fantasy):
    game = pipeline(fantasy, at(fantasy, "tree_of_life"))
    result = game.play("go to the heart of the tree")
    assert "already at Heart of the Tree" in result.narration and "not reachable" not in result.narration
    out = Rules(fantasy).resolve_turn(game.state, Effects(move_to="tree_of_life"))
    assert out.rejected[0].told == "You are already at Heart of the Tree."  # any narrator's proposal


def test_a_swing_at_empty_air_costs_no_turn(fantasy):
    game = pipeline(fantasy)
    result = game.play("attack")
    assert result.narration == "There is nothing here to fight." and game.state.turn == 0
    assert result.choices  # the choices stay on screen
    assert game.play("flee").narration == "There is nothing here to flee from." and game.state.turn == 0
    assert game.play("look").ok and game.state.turn == 1  # a look is a turn, as before


# ------------------------------------------------------------- stale lines
def talk(game: TurnPipeline, line: str) -> str:
    result = game.play(line)
    assert result.ok, result.error
    return result.narration


def test_rook_no_longer_asks_for_the_cutthroat_once_he_is_dead(fantasy):
    game = pipeline(fantasy, at(fantasy, "thieves_camp", "talked:thief_leader"))
    assert "Knock the shadow out of him" in talk(game, "ask rook about the thieves")
    game.state.add_flag("defeated:charmed_bandit")
    told = talk(game, "ask rook about the thieves")
    assert "Knock the shadow out of him" not in told and "you put him down" in told


def test_echo_reports_the_sensor_array_whole_once_the_relay_is_fitted(scifi):
    state = at(scifi, "security_hub", "talked:echo7", "used:sensor_relay@security_hub")
    state.quests["restore_power"] = QuestProgress(status="completed")
    game = pipeline(scifi, state)
    for line in ("talk to echo", "ask echo about sensors", "ask echo about status"):
        told = talk(game, line)
        assert "30 percent" not in told and "100 percent" in told, line


def test_hoshino_says_you_are_bleeding_only_when_you_are(scifi):
    hurt = at(scifi, "ripper_clinic")
    hurt.hp = hurt.max_hp // 2
    assert "bleeding" in talk(pipeline(scifi, hurt), "talk to hoshino")
    assert "bleeding" not in talk(pipeline(scifi, at(scifi, "ripper_clinic")), "talk to hoshino")


def test_the_content_check_reports_a_line_said_while_untrue(scifi):
    hoshino = scifi.npcs["doc_hoshino"]
    bleeding = hoshino.moods[0]
    stale = hoshino.model_copy(update={"greeting": bleeding.greeting, "true_while": bleeding.true_while})
    pack = scifi.model_copy(update={"npcs": {**scifi.npcs, "doc_hoshino": stale}})
    report = check_pack(pack)
    [line] = report.stale
    assert (line.npc, line.line, line.why) == ("doc_hoshino", "greeting", "HP 100/100 not below 100%")
    assert report.defects == 1 and "Lines said while untrue" in report.text()
    assert not check_pack(scifi).stale  # the story as committed says nothing untrue


def test_a_true_while_must_name_a_line_of_its_own(fantasy):
    rook = fantasy.npcs["thief_leader"].model_dump()
    rook["true_while"] = {"weather": {}}
    with pytest.raises(ValueError, match=r"true_while\.weather: no such line"):
        Npc.model_validate(rook)


def test_flee_and_defend_before_a_fight_speak_of_the_enemy_here(scifi):
    game = pipeline(scifi, at(scifi, "rain_alley"))
    assert "back away from the Cyber-Ghoul" in game.play("flee").narration
    assert "Cyber-Ghoul in sight" in game.play("defend").narration


def test_silas_and_okabe_speak_of_the_way_as_it_is(fantasy, scifi):
    altar = pipeline(fantasy, at(fantasy, "shadow_altar", "talked:silas", "defeated:shadow_knight"))
    told = talk(altar, "ask silas about the throne")
    assert "while it stands" not in told and "no longer stands" in told
    state = at(scifi, "black_market", "talked:okabe", "obtained:tower_keycard")
    told = talk(pipeline(scifi, state), "ask okabe about the tower")
    assert "You need a keycard" not in told and "You've a keycard now" in told
