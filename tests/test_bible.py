"""Story Bible: create / skip / supersede by key, rule checks, threads."""

from __future__ import annotations

from game.memory.bible import StoryBible
from game.memory.records import MemoryState


def make_bible(pack) -> StoryBible:
    return StoryBible(MemoryState(session_id="s1"), pack)


def active_for(bible: StoryBible, key: str):
    return [e for e in bible.state.bible if e.canonical_key == key and e.status == "active"]


def test_create_skip_supersede_by_key(mini_pack):
    bible = make_bible(mini_pack)
    first, outcome = bible.propose("character", "character:sage", "Old Sage", "The sage lives at the camp", turn=1)
    assert outcome == "created" and first.status == "active"
    same, outcome = bible.propose("character", "character:sage", "Old Sage", "The sage lives at the camp.", turn=2)
    assert outcome == "skipped" and same.id == first.id
    new, outcome = bible.propose("character", "character:sage", "Old Sage", "The sage moved to the tower", turn=3)
    assert outcome == "superseded"
    assert first.status == "superseded" and new.supersedes == first.id
    assert [e.id for e in active_for(bible, "character:sage")] == [new.id]
    assert len(bible.state.bible) == 2  # the skipped proposal stored nothing


def test_core_facts_are_not_overwritten(mini_pack):
    bible = make_bible(mini_pack)
    core, _ = bible.propose("world_rule", "rule:river", "River", "The river cannot be crossed by boat", importance=95)
    rival, outcome = bible.propose("world_rule", "rule:river", "River", "Boats cross the river daily", importance=50)
    assert outcome == "disputed" and rival.status == "disputed" and "core fact" in rival.reason
    assert active_for(bible, "rule:river") == [core]


def test_candidates_are_rule_checked_against_the_world(mini_pack):
    bible = make_bible(mini_pack)
    entry, outcome = bible.propose("character", "character:gandalf", "Gandalf", "A wizard arrives")
    assert outcome == "rejected" and "no character 'gandalf'" in entry.reason
    entry, outcome = bible.propose("item", "item:excalibur", "Excalibur", "A sword in a stone")
    assert outcome == "rejected"
    entry, outcome = bible.propose("relationship", "relationship:player-ghost", "Ghost", "A ghost likes you")
    assert outcome == "rejected"
    entry, outcome = bible.propose("event", "event:x", "Meeting", "You met someone", npcs=["nobody"])
    assert outcome == "rejected"
    entry, outcome = bible.propose("item", "item:sword", "Iron Sword", "The player carries the iron sword")
    assert outcome == "created" and entry.status == "active"
    assert not [e for e in bible.state.bible if e.status == "candidate"]


def test_never_two_active_entries_for_one_key(mini_pack):
    bible = make_bible(mini_pack)
    for turn, text in enumerate(["at camp", "at the woods", "at camp", "at the bridge", "at the bridge"]):
        bible.propose("relationship", "relationship:player-sage", "Sage", f"The sage is {text}", turn=turn)
        assert len(active_for(bible, "relationship:player-sage")) == 1


def test_player_statements_become_facts(mini_pack):
    bible = make_bible(mini_pack)
    results = bible.from_notes(["The player said: My name is Ren and I come from the salt marshes"], 4, ["sage"])
    contents = {e.canonical_key: e.content for e, _ in results}
    assert contents["character:player"] == "The player's name is Ren"
    assert contents["character:player-origin"] == "The player comes from the salt marshes"
    results = bible.from_notes(["The player said: I promise to find the lost ferry"], 5, [])
    ((thread, outcome),) = results
    assert thread.entry_type == "open_thread" and outcome == "created"
    # a new name supersedes the old one
    ((renamed, outcome),) = bible.from_notes(["The player said: call me Kestrel"], 6, [])
    assert outcome == "superseded" and renamed.content == "The player's name is Kestrel"


def test_structured_notes_are_accepted(mini_pack):
    bible = make_bible(mini_pack)
    note = {"entry_type": "location", "key": "location:tower", "title": "Far Tower", "content": "The tower is haunted"}
    ((entry, outcome),) = bible.from_notes([note], 3, [])
    assert outcome == "created" and entry.canonical_key == "location:tower"


def test_quest_threads_open_and_resolve(mini_pack):
    bible = make_bible(mini_pack)
    bible.from_effects([("quest_started", "riddle")], 2)
    thread = bible.by_key("thread:quest:riddle")
    assert thread is not None and thread.entry_type == "open_thread"
    bible.from_effects([("quest_completed", "riddle")], 9)
    assert thread.status == "archived"
    assert bible.by_key("thread:quest:riddle") is None
    assert bible.by_key("event:quest-done:riddle") is not None


def test_effects_become_facts(mini_pack):
    bible = make_bible(mini_pack)
    bible.from_effects([("items_gained", "stone"), ("affinity_threshold", "sage:friendly"), ("defeated", "troll")], 4)
    assert "Smooth Stone" in bible.by_key("item:stone").content
    assert bible.by_key("relationship:player-sage").npcs == ["sage"]
    assert bible.by_key("event:defeated:troll").importance >= 70
    bible.from_effects([("give_item", "stone->sage")], 5)
    assert "gave the Smooth Stone to Old Sage" in bible.by_key("item:stone").content


def test_seeded_core_settings(mini_pack):
    bible = make_bible(mini_pack)
    bible.seed_from_content()
    keys = {e.canonical_key for e in bible.active()}
    assert {"character:sage", "character:troll_npc", "style:narration", "safety:rules"} <= keys
    assert bible.by_key("safety:rules").importance == 100


def test_query_rewriter_separates_characters_and_places():
    from game.memory.query import QueryRewriter
    from game.world.loader import content_root, load_pack

    rewriter = QueryRewriter(load_pack(content_root() / "fantasy_001"))
    named, rest = rewriter.characters("What did Garrick's son say to Alicia?")
    assert set(named) == {"old_hunter", "alicia"} and "Garrick" not in rest and "Alicia" not in rest
    named, rest = rewriter.characters("what did I pick up at the hunter's lodge?")
    assert named == [] and "lodge" in rest  # a place, not the hunter
    places, rest = rewriter.places(rest)
    assert places == ["Old Hunter's Lodge"] and rest == "what did I pick up at the ?"
