"""Issue 35 item 4: fair turn cost and fair choices, and two stale content items.

What is refused before it changes the world costs no turn (the turn counter, the clock, the enemies and the
autosave cadence stay put); the choices never offer what the rules refuse, never say one thing twice and never
crowd out the way on; a weaker weapon is not taken up without the player saying so.
"""

from __future__ import annotations

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.world.choices import MAX_CHOICES, choices_after, meaning, way_on
from game.world.conditions import weapon_bonus, weapon_in_hand
from game.world.content import ContentPack
from game.world.loader import content_root, load_pack
from game.world.state import CombatState, GameState, QuestProgress, new_game
from tests.conftest import keyword_memory


def engine(pack: ContentPack, state: GameState | None = None) -> TurnPipeline:
    return TurnPipeline(pack, state or new_game(pack, seed=3), ScriptedNarrator(pack), keyword_memory(pack))


def costs_nothing(game: TurnPipeline, action: str) -> str:
    """Play ``action`` and check that it cost nothing; returns what the player read."""
    before = game.state.model_copy(deep=True)
    result = game.play(action)
    assert result.ok and result.free, (action, result.narration)
    assert game.state == before, action  # turn, clock, enemies' counts, HP: all as they were
    assert result.turn == before.turn and result.state.turn == before.turn
    return result.narration


def fighting(pack: ContentPack, node: str, enemy: str) -> GameState:
    state = new_game(pack, seed=3)
    state.node = node
    state.combat = CombatState(enemy_id=enemy, enemy_hp=pack.enemies[enemy].hp, rounds=1)
    return state


# ------------------------------------------------------------------ turns that cost nothing


def test_going_where_there_is_no_way_costs_no_turn(fantasy):
    game = engine(fantasy)
    told = costs_nothing(game, "go down")
    assert "down" in told
    game.play("go east")
    assert game.state.turn == 1  # a real move still costs its turn


def test_attacking_a_friend_costs_no_turn(fantasy):
    game = engine(fantasy)
    game.play("go east")
    assert game.state.node == "hunter_cabin"
    costs_nothing(game, "attack garrick")


def test_talking_to_or_buying_from_someone_elsewhere_costs_no_turn_and_a_stranger_may_be_answered(fantasy):
    """Was: "talk to garrick" at the trailhead ("Old Garrick is not here.") and "buy a potion from garrick" at his
    lodge ("Old Garrick has no potion to sell.") each cost a turn."""
    game = engine(fantasy)
    assert "not here" in costs_nothing(game, "talk to garrick")
    costs_nothing(game, "give 5 gold to garrick")
    costs_nothing(game, "buy the herb from garrick")
    game.play("go east")
    assert not game.play("talk to the owl").free  # no person of the story, Garrick here: the narrator's to answer
    assert "no potion" in costs_nothing(game, "buy a potion from garrick")
    assert "no pelt" in costs_nothing(game, "sell the pelt")  # nothing carried by that name
    costs_nothing(game, "buy a potion")
    bought = game.play("buy the herb")
    assert bought.ok and not bought.free and game.state.turn == 3  # a deal made costs its turn
    assert not game.play("talk to garrick").free


def test_talk_where_there_is_nobody_to_hear_it_costs_no_turn(fantasy):
    game = engine(fantasy)
    for action in ("talk to everyone", "ask about the wolves", "chat"):
        costs_nothing(game, action)
    game.play("go east")
    assert not game.play("ask about the wolves").free  # Garrick is here to answer


def test_a_refusal_does_not_let_an_ambusher_come_closer(fantasy):
    state = new_game(fantasy, seed=3)
    state.node = "shadow_swamp"  # the Bog Lurker is aggressive: it attacks after the third turn here
    state.add_flag("visited:shadow_swamp")
    game = engine(fantasy, state)
    game.play("look")
    stalking = [f for f in game.state.flags if f.startswith("stalking:")]
    assert stalking
    for _ in range(4):
        costs_nothing(game, "go up")
    assert [f for f in game.state.flags if f.startswith("stalking:")] == stalking and game.state.combat is None


def test_a_question_in_a_fight_costs_no_turn_and_an_attack_does(fantasy):
    game = engine(fantasy, fighting(fantasy, "shadow_swamp", "bog_lurker"))
    costs_nothing(game, "what is that thing?")
    costs_nothing(game, "look")
    assert game.state.combat is not None
    hp = game.state.combat.enemy_hp
    game.play("attack")
    assert game.state.turn == 1 and game.state.combat is not None and game.state.combat.enemy_hp < hp


def test_fleeing_a_boss_costs_no_turn_and_is_not_offered(scifi):
    game = engine(scifi, fighting(scifi, "data_core", "dark_code"))
    told = costs_nothing(game, "flee")
    assert "no escaping" in told
    assert "flee" not in choices_after(["flee", "attack"], game.state, scifi)
    ordinary = fighting(scifi, "rain_alley", "cyber_ghoul")
    assert "flee" in choices_after([], ordinary, scifi)


def test_a_free_answer_leaves_the_autosave_and_the_timeline_alone(fantasy, tmp_path):
    from game.saves.slots import SlotStore

    session = GameSession(engine(fantasy), SlotStore(tmp_path), autosave_every=1)
    session.play("go down")
    session.play("go down")
    session.wait_for_autosave()
    assert session.engine.state.turn == 0 and not list(tmp_path.glob("*autosave*"))
    assert len(session.timeline.moments) <= 1
    session.play("go east")
    session.wait_for_autosave()
    assert session.engine.state.turn == 1 and len(session.timeline.moments) == 2


# ------------------------------------------------------------------ choices


def test_attack_and_attack_by_name_are_one_choice(fantasy):
    state = new_game(fantasy, seed=3)
    state.node = "shadow_swamp"
    out = choices_after(["attack", "attack Bog Lurker"], state, fantasy)
    assert len([c for c in out if c.lower().startswith("attack")]) == 1, out
    fight = fighting(fantasy, "shadow_swamp", "bog_lurker")
    out = choices_after(["attack Bog Lurker", "attack the bog lurker"], fight, fantasy)
    assert len([c for c in out if c.lower().startswith("attack")]) == 1, out
    assert (
        meaning("east", state, fantasy)
        == meaning("go east", state, fantasy)
        == meaning("go to fogbound path", state, fantasy)
    )


def test_neon_crossings_way_to_the_tower_is_never_crowded_out(scifi):
    state = new_game(scifi, seed=3)
    state.node = "neon_crossing"
    state.inventory.append("tower_keycard")  # the north way opens
    for place in ("rain_alley", "neon_crossing", "black_market", "ripper_clinic", "netrunner_den"):
        state.add_flag(f"visited:{place}")
    state.quests = {"helix_tower": QuestProgress()}  # the tower is the main story's next step
    assert way_on(state, scifi) == "north"
    # two ideas of the narrator's, the drone and the ramen: four choices before any way out
    narrator = ["look at the holographic koi", "listen to the rain"]
    out = choices_after(narrator, state, scifi)
    assert len(out) == MAX_CHOICES and "go north" in out, out
    assert out[:2] == narrator  # the rest keeps its order: the way on takes the last place


def test_the_narrators_choices_the_rules_would_refuse_are_not_offered(scifi):
    state = new_game(scifi, seed=3)
    state.node = "rain_alley"  # not safe: no rest
    state.inventory += ["monowire", "smart_pistol"]
    out = choices_after(["rest", "use the smart pistol", "wield the monowire whip"], state, scifi)
    assert "rest" not in out and "use the smart pistol" not in out and "wield the monowire whip" in out


# ------------------------------------------------------------------ a weaker weapon


def test_wielding_a_weaker_weapon_asks_first(scifi):
    state = new_game(scifi, seed=3)
    state.inventory += ["monowire", "smart_pistol"]
    game = engine(scifi, state)
    told = costs_nothing(game, "wield the smart pistol")
    assert "weaker" in told and "+6" in told and "+8" in told and "anyway" in told
    assert weapon_in_hand(game.state, scifi) == "monowire" and weapon_bonus(game.state, scifi) == 8
    game.play("wield the smart pistol anyway")
    assert game.state.turn == 1
    assert weapon_in_hand(game.state, scifi) == "smart_pistol" and weapon_bonus(game.state, scifi) == 6
    game.play("wield the monowire whip")  # the better one again: no question
    assert game.state.turn == 2 and weapon_in_hand(game.state, scifi) == "monowire"


# ------------------------------------------------------------------ stale content


def test_a_main_quest_is_under_way_at_the_essence_core(scifi):
    state = new_game(scifi, seed=3)
    state.node = "data_core"
    state.inventory.append("root_key")
    for quest in scifi.story.main_quest_order[:-2]:
        state.quests[quest] = QuestProgress(status="completed")
    state.quests["the_vault_below"] = QuestProgress(objectives_done=["enter_vault", "beat_sentinel", "enter_core"])
    game = engine(scifi, state)
    game.play("talk to kage")
    assert game.state.quests["the_vault_below"].status == "completed"
    main = {q.id for q in scifi.quests.main}
    active = [q for q in game.state.active_quests() if q in main]
    assert active, "no main quest at the story's climax"
    assert "Reboot the Helix System" in game.play("look").choices  # the reboot still needs the_vault_below done


def test_the_cleansed_spring_is_the_spring(fantasy):
    state = new_game(fantasy, seed=3)
    state.node = "silver_spring"
    state.add_flag("used:sap_dewdrop@silver_spring")
    state.inventory.append("spring_water")  # the quest's reward: a vial of its water
    game = engine(fantasy, state)
    seen = game.play("x spring").narration
    assert "Vial" not in seen and "runs so clear" in seen
    drunk = game.play("drink from the spring").narration
    assert "Nothing comes of it" not in drunk and "moonlight" in drunk


# ------------------------------------------------------------------ a glance one way


def test_a_glance_one_way_says_where_it_leads_and_never_moves(fantasy):
    """Was: "look north" gave "You make an attempt to look north, to no effect." and "what lies north?" recalled
    the Forest Edge's lore; "look west" at the lodge, "Nothing much comes of trying to look west"."""
    game = engine(fantasy)
    for action in ("look north", "look to the north", "glance north", "peer north", "what lies north?"):
        result = game.play(action)
        assert result.narration.startswith("To the north lies Fogbound Path"), (action, result.narration)
        assert "not been yet" in result.narration and game.state.node == "forest_edge"
    assert game.play("look up").narration.startswith("No way leads up from here. Exits: north to Fogbound Path")
    game.play("go east")
    assert game.play("look west").narration == "To the west lies Mistwood Trailhead."  # been there: no more
    assert game.play("what is this place?").narration.startswith("Old Hunter's Lodge.")


def test_a_glance_at_a_barred_way_says_it_is_barred():
    game = engine(load_pack(content_root() / "victorian_001"))
    game.state.node = "causeway"
    told = game.play("look east").narration
    assert told.startswith("To the east lies ") and told.endswith("The way is barred for now.")
    assert game.state.node == "causeway"
