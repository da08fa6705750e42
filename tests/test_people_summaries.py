"""Issue 32, item 5: "last time with" facts are about the person, and summaries read as summaries.

Was: "Last time with Princess Alicia (turns 91-95): The player went to Granite Stair" (the batch's summary, whatever
it held), and the offline summaries strung whole quotes together. A recollection ("You recall ...", "You cannot
recall ...", "You search your memory ...") is never summarised as evidence.
"""

from __future__ import annotations

from game.engine.pipeline import TurnPipeline
from game.llm.digest import digest
from game.llm.scripted import ScriptedNarrator
from game.memory.consolidation import gather
from game.memory.records import Episode, MemoryState
from game.memory.settings import MemoryConfig
from game.world.state import new_game
from tests.conftest import keyword_memory


def played(fantasy, actions: list[str]) -> TurnPipeline:
    engine = TurnPipeline(fantasy, new_game(fantasy), ScriptedNarrator(fantasy), keyword_memory(fantasy))
    for action in actions:
        result = engine.play(action)
        assert result.ok, (action, result.error)
    return engine


def last_time_with(engine: TurnPipeline, npc: str) -> str:
    entry = engine.memory.bible.by_key(f"event:with:{npc}")
    assert entry is not None and entry.status == "active", npc
    return entry.content


def quotes(text: str) -> int:
    return text.count('"') // 2


GARRICK = ["go east", "talk to garrick", "ask garrick about hal", "ask garrick about wolves", "ask garrick about tree"]


def test_last_time_with_garrick_tells_what_he_said_briefly(fantasy):
    engine = played(fantasy, GARRICK)
    text = last_time_with(engine, "old_hunter")
    assert text.startswith("Last time with Old Garrick (turns 2-5): ")
    assert "Old Garrick told the player about hal (" in text and "), wolves and tree." in text, text
    assert "gave the player the quest The Hunter's Son" in text, text
    assert quotes(text) <= 1, text  # one short quote at most, not three
    assert "went to" not in text and "make your way" not in text, text


def test_last_time_with_someone_holds_nothing_that_happened_elsewhere(fantasy):
    """The batch of turns 11-15: Alicia at the gate, then the Granite Stair and a fight there."""
    route = ["go east", "talk to garrick", "take tonic", "go west", "go north", "take herb", "go north"]
    engine = played(fantasy, [*route, "look", "look", "look", "talk to alicia", "go east", "attack troll", "attack"])
    assert engine.state.turn == 14
    engine.play("attack")
    text = last_time_with(engine, "alicia")
    assert text.startswith("Last time with Princess Alicia (turn 11): "), text
    assert "spoke with Princess Alicia" in text or "Princess Alicia told the player" in text, text
    for elsewhere in ("Granite Stair", "Troll", "went to", "Healing Herb"):
        assert elsewhere not in text, text


def test_nobody_merely_passed_gets_a_last_time_with(fantasy):
    """Arriving where someone stands and leaving again is not time spent with them."""
    engine = played(fantasy, ["go east", "go west", "go north", "go north", "go south"])
    assert not [e for e in engine.memory.bible.active() if e.canonical_key.startswith("event:with:")]


def test_a_digest_tells_who_said_what_without_a_string_of_quotes(fantasy):
    engine = played(fantasy, GARRICK)
    (summary,) = engine.memory.state.summaries
    assert quotes(summary.text) <= 1, summary.text
    assert 'Old Garrick told the player about hal: "My boy, Hal.' in summary.text, summary.text
    assert "Old Garrick also told the player about wolves and tree." in summary.text, summary.text
    assert "Close the door" not in summary.text  # his greeting: he answered, that says they spoke


def test_denials_and_searches_of_memory_are_never_summarised():
    turns = "\n".join(
        [
            "Turn 6 at Moonwatch Gate: player: what did nyssa tell me about hal? | You cannot recall Nyssa telling "
            "you about hal.",
            "Turn 7 at Moonwatch Gate: player: who is the king? | You search your memory, but nothing you know "
            "answers that.",
            "Turn 8 at Moonwatch Gate: player: what did garrick tell me? | You recall what Old Garrick told you: "
            'about hal, "My boy, Hal."',
        ]
    )
    assert digest(turns) == "The player spent the time at Moonwatch Gate; nothing of note happened."


def test_a_turn_flagged_as_a_recollection_is_not_read_by_consolidation():
    state = MemoryState(session_id="s")
    state.log += [
        Episode(turn=1, action="talk to garrick", narration='Old Garrick: "Sit."', node="Lodge"),
        Episode(turn=2, action="what did he say?", narration="Old Garrick said: sit.", node="Lodge", recalled=True),
    ]
    batch = gather(state, [], MemoryConfig(), "", 1, 2)
    assert batch is not None and "Turn 1" in batch.text
    assert "Turn 2" not in batch.text and "Turn 2" not in batch.facts_text
    assert batch.upto == 2  # the recollection is consolidated (skipped), not left queued
