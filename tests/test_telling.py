"""Telling with range (issue 35, item 1): the scripted narrator varies how it opens a turn, a retry is another
telling of the same outcome, and people answer what they are asked.

Measured on the committed walkthroughs, played in-process as ``storyecho run --llm scripted`` plays them (seed 0,
keyword memory): before, "You make your way to" opened 32% of the turns of Misty Forest's victory, 39% of
Cyber's rewrite and 45% of The Drowned Light's dawn (``python -m pytest tests/test_telling.py -s`` prints the
figures as they are now).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from game.engine.session import GameSession
from game.llm.tellings import TELLINGS, opening
from game.world.loader import content_root, load_pack
from tests.conftest import scripted_session

WALKTHROUGHS = Path(__file__).parent / "walkthroughs"
MOST = 0.10
"""The largest share of a walkthrough's turns one four-word opening may start."""
VICTORIES = [
    ("fantasy_001", "victory"),  # the walkthrough the issue measured (32%)
    ("scifi_001", "rewrite"),  # Cyber's best ending (priority 40), the one the issue measured (39%)
    ("scifi_001", "purge"),  # and its ending by open battle, as Misty Forest's victory is
    ("victorian_001", "dawn"),  # The Drowned Light's main ending (priority 30)
]


def actions(story: str, ending: str) -> list[str]:
    lines = (WALKTHROUGHS / f"{story}__{ending}.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def game(story: str, root: Path) -> GameSession:
    return scripted_session(load_pack(content_root() / story), root, seed=0)  # the CLI's seed


@pytest.mark.parametrize(("story", "ending"), VICTORIES, ids=lambda v: v)
def test_no_opening_starts_more_than_a_tenth_of_a_walkthrough(story, ending, tmp_path):
    session = game(story, tmp_path)
    told = [session.play(action).narration for action in actions(story, ending)]
    openings = Counter(opening(t) for t in told)
    top, count = openings.most_common(1)[0]
    print(f"{story}/{ending}: {len(told)} turns, most common opening {top!r} {count} ({count / len(told):.0%})")
    assert count / len(told) <= MOST, openings.most_common(5)


def test_the_four_word_opening_is_read_as_the_issue_reads_it():
    assert opening("You make your way to Old Hunter's Lodge. A low lodge") == "you make your way"
    assert opening("Moonwatch Gate, once again.") == opening("moonwatch gate once again!")
    assert opening("Old Hunter's Lodge, once again.") == "old hunters lodge once"


def test_every_variant_of_a_kind_opens_differently():
    fields = {"place": "Fogbound Path", "foe": "the Wolf", "item": "Herb", "weapon": "Axe", "npc": "Bruno"}
    fields |= {"target": "x", "exits": "north", "description": "A herb.", "action": "dance", "said": "Hi."}
    fields |= {"text": "Told.", "subject": "he", "it": "it"}
    for kind, variants in TELLINGS.items():
        if kind == "heard":  # it follows the player's words: it opens nothing
            continue
        shown = [opening(v.format(**fields)) for v in variants]
        assert len(set(shown)) == len(shown) >= 3, kind


def step(session: GameSession, action: str, *, retry: bool = False) -> tuple[str, list[str], dict]:
    """One turn (or a retry of the last): its narration, the rules' effects and the state it left."""
    result = session.play("retry" if retry else action)
    assert result.ok, result.error
    effects = [f"{a.effect}: {a.detail}" for a in result.applied]
    return result.narration, effects, session.engine.state.model_dump(mode="json")


def differ_beyond_a_prefix(tellings: list[str]) -> bool:
    """No telling is another with words put before it, and each opens its own way."""
    for i, one in enumerate(tellings):
        for other in tellings[i + 1 :]:
            if one == other or one.endswith(other) or other.endswith(one):
                return False
    return len({opening(t) for t in tellings}) == len(tellings)


def test_three_retries_of_a_move_are_three_other_tellings_of_the_same_outcome(fantasy, tmp_path):
    """Was: "A moment passes. " / "You take a breath and try it another way. " / "The world seems to hold still
    for a heartbeat. " before the same text."""
    session = scripted_session(fantasy, tmp_path, seed=0)
    first = step(session, "go east")
    retold = [step(session, "go east", retry=True) for _ in range(3)]
    tellings = [first[0], *(r[0] for r in retold)]
    assert differ_beyond_a_prefix(tellings), tellings
    lodge = fantasy.nodes["hunter_cabin"]
    assert all(t.endswith(lodge.description.split(". ")[0] + ".") or lodge.description[:40] in t for t in tellings)
    assert all(r[1:] == first[1:] for r in retold)  # the same effects, the same state


def test_retries_of_a_fight_round_keep_its_dice(mini_pack, tmp_path):
    session = scripted_session(mini_pack, tmp_path, seed=0)
    for action in ("go north", "attack wolf"):  # bare-handed: the wolf outlasts the first blow
        step(session, action)
    first = step(session, "attack")
    retold = [step(session, "attack", retry=True) for _ in range(3)]
    told = [first[0].partition("\n"), *(r[0].partition("\n") for r in retold)]
    assert differ_beyond_a_prefix([line for line, _, _ in told]), told
    assert {rules for _, _, rules in told} == {told[0][2]} and "Grey Wolf" in told[0][2]  # the same blows
    assert all(r[1:] == first[1:] for r in retold)


def test_a_retry_of_a_turn_told_in_the_storys_words_frames_them_anew(fantasy, tmp_path):
    session = scripted_session(fantasy, tmp_path, seed=0)
    first = step(session, "look")
    retold = [step(session, "look", retry=True) for _ in range(2)]
    assert len({first[0], *(r[0] for r in retold)}) == 3
    assert all(r[1:] == first[1:] for r in retold)


def played_to(story: str, ending: str, last: str, root: Path) -> GameSession:
    """A game of ``story`` played along a walkthrough up to and including the action ``last``."""
    session = game(story, root)
    route = actions(story, ending)
    for action in route[: route.index(last) + 1]:
        session.play(action)
    return session


def test_asked_about_his_domain_once_his_trial_is_passed_bruno_answers_about_it(tmp_path):
    """Was: `ask bruno about strength` after the trial -> "I am Bruno, guardian of Strength." (his trial's words,
    which spoke of strength, had changed with the trial passed)."""
    session = played_to("fantasy_001", "victory", "talk to bruno", tmp_path)
    state = session.engine.state
    assert state.node == "stone_hall" and state.quests["trial_of_strength"].status == "completed"
    told = session.play("ask bruno about strength").narration
    assert "I am Bruno" not in told
    assert told.startswith("Bruno") and "Passed, and passed well" in told


def test_where_is_the_voice_says_where_the_voice_is(tmp_path):
    """Was: "where is the voice?" on Research Floor 88 -> Dr. Senda's words about Rei Kirishima (his topic "rei"
    goes by "the voice"), which name no place. The Voice speaks through the pod bay intercom (``npcs.json``:
    ``the_voice``, at ``lab_pod_bay``; ``knowledge.json``: ``voice_is_rei``)."""
    session = played_to("scifi_001", "purge", "talk to senda", tmp_path)
    assert session.engine.state.node == "research_floor"
    told = session.play("where is the voice?").narration
    assert "Lab Pod Bay" in told and "upload chair" not in told, told
    here = session.play("where is senda?").narration
    assert here.startswith("Dr. Ichiro Senda is right here"), here


def test_where_is_someone_memory_does_not_place_is_said_plainly(scifi, tmp_path):
    """Was: "where is kage?" on the first turn -> the Voice's words about the dark code."""
    session = scripted_session(scifi, tmp_path, seed=0)
    told = session.play("where is kage?").narration
    known = re.search(r"Kage", told) and any(n.name in told for n in scifi.nodes.values())
    assert known or told == "You do not know where Kage is.", told
