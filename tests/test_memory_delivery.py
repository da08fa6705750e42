"""Issue 21, case by case: what recall finds reaches the narrator, the memories made are true, the summaries read
as summaries, and questions about what people said, who the player is and what people know are answered right."""

from __future__ import annotations

import re

from game.engine.pipeline import TurnPipeline
from game.llm.digest import digest
from game.llm.scripted import ScriptedNarrator
from game.llm.tellings import TELLINGS
from game.memory.manager import GameMemory
from game.memory.vectors.inprocess import InProcessVectorStore
from game.world.state import new_game
from tests.conftest import MISTY_OPENING as OPENING
from tests.conftest import keyword_memory


def keyword_engine(pack):
    return TurnPipeline(pack, new_game(pack), ScriptedNarrator(pack), keyword_memory(pack))


def test_recalled_memories_reach_the_narrator_after_turn_ten_with_real_embeddings(fantasy, embedder):
    """Was: from turn 11 on, all 12 recalled items were cut on every turn, the three best of 'what did garrick
    tell me?' among them, while world rules and six absent characters stayed in."""
    memory = GameMemory(fantasy, ScriptedNarrator(fantasy), store=InProcessVectorStore(), embedder=embedder)
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), memory)
    later = delivered = 0
    for action in OPENING:
        result = engine.play(action)
        assert result.ok, (action, result.error)
        kept = result.trace.prompt.memory.block("relevant_memories")
        if result.turn > 10:
            later += 1
            delivered += bool(kept.items)
        if action == "what did garrick tell me?":
            best = sorted([*kept.items, *kept.cut], key=lambda i: -i.score)[:3]
            assert {i.source for i in best} <= {i.source for i in kept.items}, result.turn
            assert "Old Garrick told you" in result.narration and "Hal" in result.narration
        assert result.trace.prompt.tokens <= engine.prompt_budget_tokens
    memory.close()
    assert delivered >= 0.9 * later


def test_a_last_time_with_memory_is_made_only_for_people_the_player_was_with(fantasy):
    """Was: after asking Garrick about Hal and Silas, "Last time with Hal" and "Last time with Silas"."""
    engine = keyword_engine(fantasy)
    for action in OPENING[:10]:
        engine.play(action)
    keys = {e.canonical_key for e in engine.memory.bible.active() if e.canonical_key.startswith("event:with:")}
    assert keys == {"event:with:old_hunter", "event:with:alicia"}


def test_summaries_and_the_synopsis_read_as_a_third_person_digest(fantasy):
    """Was: "ask garrick about hal. Old Garrick: "My boy, Hal. ... You recall: You recall: ... look." """
    engine = keyword_engine(fantasy)
    for action in OPENING:
        engine.play(action)
    state = engine.memory.state
    texts = [s.text for s in state.summaries] + [state.synopsis]
    assert len(texts) >= 6 and state.synopsis
    commands = [a for a in OPENING if len(a.split()) > 1]
    for text in texts:
        assert "You recall" not in text and "You search your memory" not in text
        assert not any(command in text for command in commands), text  # never the player's commands as typed
        assert not re.search(r"(^|[.!?] )You\b", text), text  # third person
        sentences = re.split(r'(?<=[.!?"])\s+(?=[A-Z])', text)
        assert len(sentences) == len(set(sentences)), text  # no sentence twice
    first = state.summaries[0].text
    assert 'Old Garrick told the player about hal: "My boy, Hal.' in first
    assert "Old Hunter's Lodge" in first
    assert "Quest complete: Into the Mist." in state.synopsis
    assert len(state.synopsis) <= engine.memory.config.synopsis_chars


def test_a_digest_leaves_out_quiet_turns_and_says_so_when_nothing_happened():
    quiet = "Turn 3 at Moonwatch Gate: player: look | Moonwatch Gate. Two living trees.\n" + (
        "Turn 4 at Moonwatch Gate: player: what did garrick tell me? | You recall: Old Garrick said so."
    )
    assert digest(quiet) == "The player spent the time at Moonwatch Gate; nothing of note happened."
    busy = (
        "Turn 5 at Old Hunter's Lodge: player: take tonic | The tonic smells of pine.\nYou take the Hunter's Tonic."
        '\nTurn 6 at Old Hunter\'s Lodge: player: say I fear the dark | You say aloud: "I fear the dark."'
    )
    assert digest(busy) == (
        "The player took the Hunter's Tonic. At Old Hunter's Lodge, the player said: \"I fear the dark.\""
    )


def test_what_did_someone_tell_me_is_answered_with_their_own_words(fantasy):
    """Was: `what did garrick tell me?` answered from the hunter's letter."""
    engine = keyword_engine(fantasy)
    for action in ["go east", "talk to garrick", "ask garrick about hal", "go west", "go north"]:
        engine.play(action)
    answer = engine.play("what did garrick tell me?").narration
    assert answer.startswith("You recall what Old Garrick told you: about hal,")
    assert "My boy, Hal" in answer and "letter" not in answer
    never = engine.play("what did alicia tell me?").narration
    assert never == "You cannot recall Princess Alicia telling you anything."


def test_what_is_my_name_is_the_players_latest_name_never_a_character_sketch(scifi):
    """Was: with The Voice present, `what is my name?` answered with The Voice's character sketch."""
    engine = keyword_engine(scifi)
    assert engine.state.node == "lab_pod_bay" and "the_voice" in scifi.nodes["lab_pod_bay"].npcs
    assert engine.play("what is my name?").narration == "You have not told anyone your name yet."
    engine.play("say my name is Ren")
    engine.play("look")
    engine.play("say my name is Kai")
    assert engine.play("what is my name?").narration == "You recall: Your name is Kai."
    assert engine.play("who am i?").narration.startswith("You recall: You are Kai.")


def test_people_answer_about_what_the_lore_says_they_know(fantasy):
    """Was: `ask alicia about garrick` -> "I know nothing about garrick" (he sent you to her); `ask bruno about
    strength` -> "I know nothing about strength" (he is the Guardian of Strength)."""
    engine = keyword_engine(fantasy)
    engine.state.node = "sanctuary_gate"
    about_garrick = engine.play("ask alicia about garrick").narration
    assert "know nothing" not in about_garrick
    assert "Old Hunter's Lodge" in about_garrick and "sent you to me" in about_garrick
    engine.state.node = "stone_hall"
    about_strength = engine.play("ask bruno about strength").narration
    assert about_strength.startswith('Bruno: "Strength is not words.')
    assert "know nothing" in engine.play("ask bruno about the price of turnips").narration


def test_me_and_myself_mean_the_player_in_every_verb(fantasy):
    """Was: `heal me` -> "You try to heal me"."""
    engine = keyword_engine(fantasy)
    healing = {i for i, item in fantasy.items.items() if item.use and item.use.heal}
    engine.state.inventory = [i for i in engine.state.inventory if i not in healing]
    assert engine.play("heal me").narration == "You have nothing to heal yourself with."
    hug = [v.format(action="hug yourself") for v in TELLINGS["fruitless"]]
    assert engine.play("hug myself").narration in hug
    assert engine.play("examine me").narration.startswith("You look yourself over. Traveller - level 1")
    engine.state.inventory.append("healing_herb")
    engine.state.hp = 40
    healed = engine.play("heal me")
    assert healed.narration.startswith("You tend to yourself with the Healing Herb.")
    assert engine.state.hp > 40 and "healing_herb" not in engine.state.inventory
