"""The one name matcher every layer uses (game/text.py)."""

from __future__ import annotations

from game.text import best_match, estimate_tokens, keywords, mentions

PEOPLE = [("old_hunter", ["Old Garrick", "Garrick", "old hunter"]), ("hal", ["Hal"]), ("alicia", ["Alicia"])]


def test_mentions_finds_whole_names_once_and_removes_them():
    found, rest = mentions("What did Garrick's son Hal say to Alicia and to halberdiers?", PEOPLE)
    assert set(found) == {"old_hunter", "hal", "alicia"}
    assert "Garrick" not in rest and "Hal " not in rest and "halberdiers" in rest  # whole words only
    found, rest = mentions("Old Garrick and Garrick", PEOPLE)
    assert found == ["old_hunter"] and rest == "and"  # the longest name first, every mention removed


def test_masked_phrases_name_no_one():
    found, rest = mentions("what did I find at the old hunter's lodge?", PEOPLE, masked=["old hunter's lodge"])
    assert found == [] and "lodge" in rest


def test_best_match_prefers_what_the_text_names_then_shared_words():
    items = [("healing_herb", ["Healing Herb"]), ("herb_pouch", ["Herb Pouch"]), ("tonic", ["Heartsap Tonic"])]
    assert best_match("the healing herb", items) == "healing_herb"
    assert best_match("pouch", items) == "herb_pouch"
    assert best_match("tonic", items) == "tonic"
    assert best_match("herb_pouch", items) == "herb_pouch"  # an id
    assert best_match("a sword", items) is None
    assert best_match("talk to the old hunter about hal", PEOPLE) in {"old_hunter", "hal"}


def test_keywords_and_token_estimate():
    assert keywords("The swamps were hunted") == ["swamp", "hunt"]
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
