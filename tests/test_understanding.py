"""A parser and narrator that understand players (issue 10, part C).

Questions and talk go to the one person present; topics and people go by other
names; objectives' own verbs are understood; "me" is the player; NPCs have the
pronouns their content gives; recalled facts are said as sentences, the latest
Story Bible value first, never as raw log lines. Played through the real
pipeline (scripted narrator, keyword memory) as a player would type.
"""

from __future__ import annotations

import json

import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.prompt import compose
from game.language.parser import clauses, parse
from game.llm.scripted import ScriptedNarrator
from game.memory.base import MemoryBlock, MemoryContext, MemoryItem
from game.world.content import ContentPack, Npc
from game.world.loader import content_root, load_pack
from game.world.state import GameState, QuestProgress, new_game
from tests.conftest import SHIPPED, keyword_memory

STORIES = SHIPPED


@pytest.fixture(scope="module")
def forest() -> ContentPack:
    return load_pack(content_root() / "fantasy_001")


@pytest.fixture(scope="module")
def cyber() -> ContentPack:
    return load_pack(content_root() / "scifi_001")


def engine_at(pack: ContentPack, node: str, *items: str) -> TurnPipeline:
    engine = TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack))
    engine.state.node = node
    engine.state.inventory += list(items)
    return engine


def turn(pack: ContentPack, action: str, state: GameState, memory: MemoryContext | None = None) -> dict:
    bundle = compose(action, parse(action), state, pack, memory or MemoryContext())
    return json.loads(ScriptedNarrator(pack).narrate(bundle))


# ------------------------------------------------------------ who is asked
def test_a_question_with_one_person_here_is_for_them(forest):
    engine = engine_at(forest, "sanctuary_gate")
    who = engine.play("who are you?")
    assert who.narration.startswith('Princess Alicia: "I am Princess Alicia, princess of the elves')
    crying = engine.play("why are you crying?")
    assert crying.narration.startswith("Princess Alicia answers:") and "My mother, Queen Elowen" in crying.narration
    assert "recall" not in crying.narration and "search your memory" not in crying.narration
    assert ("talk_to", "alicia") in [(a.effect, a.detail) for a in crying.applied]
    odd = engine.play("why are you wearing boots?")  # nothing she speaks of: still her answer, not your memory
    assert odd.narration.startswith("Princess Alicia looks at you") and "ask her about" in odd.narration


def test_ask_about_without_a_name_asks_the_one_person_here(cyber):
    engine = engine_at(cyber, "lab_pod_bay")
    reply = engine.play("ask about kyoto")
    assert reply.narration.startswith('The Voice: "The umbrella had a broken rib')
    assert engine.play("ask her about the vault").narration.startswith('The Voice: "Beneath the Helix Tower')


def test_a_question_with_no_one_here_is_for_memory(forest):
    engine = engine_at(forest, "forest_edge")
    assert "nothing you know" in engine.play("who are you?").narration


# ------------------------------------------------------- names and topics
def test_topics_go_by_their_aliases(forest):
    engine = engine_at(forest, "hunter_cabin")
    said = engine.play("ask garrick about the shadow lord").narration
    assert said.startswith('Old Garrick: "The Shadow Lord was a guardian once: Silas')
    engine.state.node = "sanctuary_gate"
    assert "He was my mother's dearest friend" in engine.play("ask alicia about the shadow lord").narration
    assert "dearest friend" in engine.play("what of the shadow lord?").narration


def test_the_shadow_lord_is_silas_and_at_his_throne_an_enemy(forest):
    assert "shadow lord" in [n.lower() for n in forest.npcs["silas"].names]
    assert forest.nodes["shadow_throne"].enemies == ["shadow_lord"] and not forest.nodes["shadow_throne"].npcs
    engine = engine_at(forest, "shadow_throne")
    reply = engine.play("talk to the shadow lord")
    assert reply.ok and reply.narration.startswith(forest.enemies["shadow_lord"].encounter)
    assert "parley with the Shadow Lord" in reply.narration and "no one answers" not in reply.narration
    assert not reply.applied and not reply.rejected and engine.state.combat is None  # words, not a fight
    assert engine.play("talk to silas").narration.startswith(forest.enemies["shadow_lord"].encounter)
    engine.state.node = "shadow_altar"  # at the altar, his shade is an NPC
    shade = engine.play("talk to the shadow lord")
    assert ("talk_to", "silas") in [(a.effect, a.detail) for a in shade.applied]
    assert shade.narration.startswith("Silas:")


def test_topic_aliases_must_name_topics(forest):
    data = forest.npcs["alicia"].model_dump()
    with pytest.raises(ValueError, match=r"topic_aliases\.weather: no such topic"):
        Npc.model_validate({**data, "topic_aliases": {"weather": ["rain"]}})


# ------------------------------------------------------------ pronouns
def test_pronouns_come_from_content(forest, cyber, mini_pack):
    assert forest.npcs["alicia"].pronouns == "she/her" and cyber.npcs["echo7"].pronouns == "it/its"
    assert all(npc.pronouns != "they/them" for pack in (forest, cyber) for npc in pack.npcs.values())
    state = new_game(forest)
    state.node = "sanctuary_gate"
    assert "Princess Alicia shakes her head." in turn(forest, "ask alicia about the weather", state)["narration"]
    state.node = "hunter_cabin"
    assert "Old Garrick shakes his head." in turn(forest, "ask garrick about the weather", state)["narration"]
    state = new_game(cyber)
    state.node = "security_hub"
    assert "ECHO-7 shakes its head." in turn(cyber, "ask echo about the weather", state)["narration"]
    state = new_game(mini_pack)  # an NPC whose content gives no pronouns
    assert "shakes their head." in turn(mini_pack, "ask the sage about the weather", state)["narration"]


# ---------------------------------------------------------- the player
def test_me_is_the_player(cyber, forest):
    engine = engine_at(cyber, "research_floor")
    about = engine.play("ask senda about me").narration
    assert about.startswith('Dr. Ichiro Senda: "The vessel bodies were Rei') and "about me" not in about
    engine = engine_at(forest, "hunter_cabin")
    engine.play("my name is Ren")
    garrick = engine.play("ask garrick about me").narration
    assert "I know nothing" not in garrick and "about me" not in garrick
    assert garrick.startswith('Old Garrick looks you over. "Your name is Ren.') and "He seems" in garrick


def test_telling_someone_your_name_records_the_name_not_the_addressee(forest):
    engine = engine_at(forest, "hunter_cabin")
    told = engine.play("tell garrick my name is Kael")
    assert 'You tell Old Garrick: "My name is Kael."' in told.narration
    assert "garrick my name" not in told.narration.lower()
    assert told.memory_notes == ["The player said: my name is Kael"]
    names = [e.content for e in engine.memory.bible_entries() if e.canonical_key == "character:player"]
    assert names == ["The player's name is Kael"]


# --------------------------------------------------- recalled as sentences
def test_the_latest_name_is_recalled_as_a_sentence(forest):
    engine = engine_at(forest, "forest_edge")
    engine.play("say my name is Kael")
    for _ in range(14):
        engine.play("look")
    engine.state.node = "hunter_cabin"
    engine.play("tell garrick my name is Bob")
    for _ in range(14):
        engine.play("look")
    reply = engine.play("what is my name?")
    assert reply.narration == "You recall: Your name is Bob."
    recalled = [i.text for i in reply.trace.memory.all_items()]
    assert any("Kael" in t and t.startswith("Turn ") for t in recalled)  # the older name was there to mislead


def test_history_is_said_as_what_happened_never_as_a_log_line(mini_pack):
    log = 'Turn 2 at Village Square: player: Say my name is Kael | You say aloud: "My name is Kael."'
    memory = MemoryContext(
        blocks=[MemoryBlock("relevant_memories", "Relevant memories", "L2", [MemoryItem(log, 0.9, "turn-2")])]
    )
    said = turn(mini_pack, "what is my name?", new_game(mini_pack), memory)["narration"]
    assert "Kael" in said and "Turn 2" not in said and "player:" not in said and "|" not in said
    assert said.startswith('You recall: At Village Square, you said: "my name is Kael".')


def test_a_bible_fact_beats_the_history_and_the_latest_wins(mini_pack):
    items = [
        MemoryItem("Turn 2 at Village Square: player: say my name is Kael | You say aloud.", 0.9, "turn-2"),
        MemoryItem("The player's name is Ash", 0.8, "bible-20"),
        MemoryItem("The player's name is Bob", 0.8, "bible-31"),
    ]
    memory = MemoryContext(blocks=[MemoryBlock("bible_core", "Story Bible", "bible", items)])
    assert turn(mini_pack, "what is my name?", new_game(mini_pack), memory)["narration"] == (
        "You recall: Your name is Bob."
    )


# ---------------------------------------------------- objectives' verbs
def test_verbs_of_the_objectives_are_understood(forest, cyber):
    spring = engine_at(forest, "silver_spring", "sap_dewdrop")
    drink = spring.play("drink from the spring")
    assert drink.narration.startswith("You cup the water and drink.")  # the spring's own use (issue 25)
    assert "the spring is sick, just as Nyssa said" in drink.narration
    spring.state.quests["purifying_spring"] = QuestProgress()
    spring.state.intelligence = 30
    poured = spring.play("pour the dewdrop into the spring")
    assert ("use_item", "sap_dewdrop") in [(a.effect, a.detail) for a in poured.applied]
    bunker = engine_at(cyber, "distribution_room", "ceramic_fuse", "insulated_gloves")
    bunker.state.quests["restore_power"] = QuestProgress()
    fused = bunker.play("put the fuse in the breaker")
    assert ("use_item", "ceramic_fuse") in [(a.effect, a.detail) for a in fused.applied]
    assert "used:ceramic_fuse@distribution_room" in bunker.state.flags
    relay = engine_at(cyber, "security_hub", "sensor_relay")
    assert "use_item" in turn(cyber, "insert the relay into the sensor array", relay.state)["effects"]
    sanctuary = engine_at(forest, "elven_sanctuary", "tome_of_roots")
    assert turn(forest, "read the tome", sanctuary.state)["effects"] == {"use_item": "tome_of_roots"}
    stair = engine_at(forest, "stone_stair")
    assert turn(forest, "climb the stair", engine_at(forest, "sanctuary_gate").state)["effects"]["move_to"] == (
        "stone_stair"
    )
    assert turn(forest, "climb up", stair.state)["effects"]["move_to"] == "stone_hall"
    verse = engine_at(forest, "silver_spring", "sap_dewdrop")  # the objective's second step, in its own words
    assert turn(forest, "speak the verse", verse.state)["effects"] == {"use_item": "sap_dewdrop"}


def _setup(pack: ContentPack, quest_id: str, objective) -> tuple[GameState, dict]:
    """A state where ``objective`` can happen next, and the effect that makes it happen."""
    state = new_game(pack)
    state.quests[quest_id] = QuestProgress()
    target, kind = objective.target, objective.kind
    if kind == "visit":
        state.node = next(n.id for n in pack.nodes.values() if target in n.exits.values())
        return state, {"move_to": target}
    if kind == "talk":
        state.node = pack.npcs[target].location
        return state, {"talk_to": target}
    if kind == "defeat":
        state.node = pack.enemies[target].nodes[0]
        return state, {"start_combat": target}
    if kind == "obtain":
        state.node = next((n.id for n in pack.nodes.values() if target in n.items), state.node)
        return state, {"items_gained": [target]}
    if kind == "use":
        state.node = objective.at_node or state.node
        state.inventory.append(target)
        return state, {"use_item": target}
    assert kind == "give" and objective.to_npc
    state.node = pack.npcs[objective.to_npc].location
    state.inventory.append(target)
    return state, {"give_item": {"item": target, "to": objective.to_npc}}


@pytest.mark.parametrize("story", STORIES)
def test_no_objective_word_falls_through(story):
    """Every objective, typed as written and step by step, proposes the effect that completes it."""
    pack = load_pack(content_root() / story)
    missed = []
    for quest in pack.all_quests():
        for objective in quest.objectives:
            if objective.kind == "choice":
                continue
            if objective.kind == "obtain" and not any(objective.target in n.items for n in pack.nodes.values()):
                continue  # loot: it is won, not typed
            for line in dict.fromkeys([objective.description, *clauses(objective.description)]):
                state, expected = _setup(pack, quest.id, objective)
                if parse(line).verb == "go" and objective.kind != "visit" and objective.at_node:
                    # a step on the way ("Go down to the backup generator and use ...")
                    state.node = next(n.id for n in pack.nodes.values() if objective.at_node in n.exits.values())
                    expected = {"move_to": objective.at_node}
                effects = turn(pack, line, state)["effects"]
                if any(effects.get(k) != v for k, v in expected.items()):
                    missed.append(f"{line!r} -> {effects}")
    assert not missed, "\n".join(missed)


def test_words_said_stay_said(forest):
    """Saying what an objective's words share ("hal") records it; it is not turned into that objective's talk."""
    state = new_game(forest)
    state.node = "misty_path"
    said = turn(forest, "say hal is alive", state)
    assert said["effects"] == {} and said["memory_notes"] == ["The player said: hal is alive"]
    spring = new_game(forest)
    spring.node, spring.inventory = "silver_spring", ["sap_dewdrop"]
    assert turn(forest, "say the verse", spring)["effects"] == {"use_item": "sap_dewdrop"}
