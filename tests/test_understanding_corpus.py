"""Issue 41's corpus: hundreds of phrasings over the three stories, both ways, measured with both narrators.

Fourteen parts, each written by a different writer (``docs/understanding.md`` has every figure and how to reproduce
it):

- ``corpus_dev.py`` (268 rows) was written from the bug report and tuned against from the start;
- ``corpus_heldout.py`` (394 rows) was written before the work, by writers who had not read the code, and kept
  outside the repository. Measured once: 74.2% carried out, 22.7% silent false refusals, 1.8% misses (built-in
  narrator). Then tuned against;
- ``corpus_heldout2.py`` (149 rows) was written after that, the same way. Measured once: 77.4% carried out, 19.0%
  silent false refusals, 1.5% misses. Then tuned against;
- ``corpus_heldout3.py`` (149 rows), the same way again. Measured once: 75.3% carried out, 23.5% silent false
  refusals, 10.9% misses. Then tuned against;
- ``corpus_heldout4.py`` (148 rows), the same way again, after a rule that asks back an unknown verb on the one
  thing a line names. Measured once: 89.2% carried out, 10.8% silent false refusals, 6.2% misses. Then tuned
  against;
- ``corpus_heldout5.py`` (209 rows), the same way again. Measured once: 78.3% carried out, 19.2% silent false
  refusals, 2.2% misses. Then tuned against: a line no reader resolved is asked back (``game.world.guess``);
- ``corpus_heldout6.py`` (173 rows), written beside part five and kept unread until that rule was built: 79.4%
  carried out and 17.6% silent before it, 85.3% and 12.7% after, misses 1.2%. Then tuned against;
- ``corpus_heldout7.py`` (178 rows), written while five and six were tuned on and read once when that was done:
  86.1% carried out, 11.1% silent, 12.0% confirmations, 4.9% misses (the code before: 78.7%, 18.5%, 2.8%, 4.9%).
  Over the 178 rows kept (eleven repeated earlier parts): 85.3%, 11.8%, 11.8%, 5.3%. Then tuned against;
- ``corpus_heldout8.py`` (176 rows), written while seven was tuned on, read once at the end: 91.1% carried out,
  8.9% silent, 6.9% confirmations, 3.7% misses over its 182 rows (the code before the asking back: 87.1%, 12.9%,
  3.0%, 3.7%). Tuned on in part during round nine (three of its lines informed rules);
- ``corpus_heldout9.py`` (179 rows), written while five to eight were tuned on, read once after round nine's
  grammar: 87.8% carried out, 11.2% silent, 8.2% confirmations, no miss (the code before the round: 83.7%, 15.3%,
  0.0%). Then tuned against;
- ``corpus_heldout10.py`` (180 rows), written from the content alone by a writer told to avoid every earlier
  part's phrasings (a near-duplicate check against them), read once after round ten's rules (a model's reading
  asked back, bare lists, awaited gifts): 78.8% carried out, 16.2% silent, 12.1% confirmations, 3.7% misses (the
  code before the round: 77.8%, 17.2%, 11.1%, 3.7%). Then tuned against;
- ``corpus_heldout11.py`` (201 rows), written from the content alone as new players type (not pushed away from
  earlier phrasings, only near-duplicates rewritten), read once before round eleven: 91.9% carried out, 6.7%
  silent, 12.6% confirmations, 1.5% misses. Then tuned against;
- ``corpus_heldout12.py`` (200 rows), written the same way by a writer of several personas (a terse veteran, a
  phone typist, a role-player), read once after part 11's rules: 87.8% carried out, 11.5% silent, 13.0%
  confirmations, 1.4% misses (the code before the round: 86.3%, 13.0%, 13.0%, 1.4%). Then tuned against;
- ``corpus_heldout13.py`` (201 rows), written the same way again, read once after part 12's rules: 94.3% carried
  out, 5.0% silent, 13.6% confirmations, 3.3% misses. Then tuned against.

Each fresh part showed that tuning on the last one reached only part of the next: the issue's goals (misses at
most 2%, silent false refusals at most 2%, confirmations at most 15%) hold on the development part, and were not
met on any part the first time it was read. What these tests hold is that no part falls back below where the
work left it: the goals on the development part, and on the held-out parts (now tuned) the figures reached, with
the issue's bound on misses.

``python -m tests.language.measure --failures FILE...`` prints the table and every row that failed.
"""

from __future__ import annotations

import pytest

from tests.language.acts import problems, shipped_packs
from tests.language.corpus_dev import ROWS as DEVELOPMENT
from tests.language.corpus_heldout import ROWS as HELD_OUT
from tests.language.corpus_heldout2 import ROWS as HELD_OUT_2
from tests.language.corpus_heldout3 import ROWS as HELD_OUT_3
from tests.language.corpus_heldout4 import ROWS as HELD_OUT_4
from tests.language.corpus_heldout5 import ROWS as HELD_OUT_5
from tests.language.corpus_heldout6 import ROWS as HELD_OUT_6
from tests.language.corpus_heldout7 import ROWS as HELD_OUT_7
from tests.language.corpus_heldout8 import ROWS as HELD_OUT_8
from tests.language.corpus_heldout9 import ROWS as HELD_OUT_9
from tests.language.corpus_heldout10 import ROWS as HELD_OUT_10
from tests.language.corpus_heldout11 import ROWS as HELD_OUT_11
from tests.language.corpus_heldout12 import ROWS as HELD_OUT_12
from tests.language.corpus_heldout13 import ROWS as HELD_OUT_13
from tests.language.measure import Report, measure
from tests.language.rows import KINDS

PARTS = {
    "development": DEVELOPMENT,
    "held-out": HELD_OUT,
    "held-out 2": HELD_OUT_2,
    "held-out 3": HELD_OUT_3,
    "held-out 4": HELD_OUT_4,
    "held-out 5": HELD_OUT_5,
    "held-out 6": HELD_OUT_6,
    "held-out 7": HELD_OUT_7,
    "held-out 8": HELD_OUT_8,
    "held-out 9": HELD_OUT_9,
    "held-out 10": HELD_OUT_10,
    "held-out 11": HELD_OUT_11,
    "held-out 12": HELD_OUT_12,
    "held-out 13": HELD_OUT_13,
}
FLOORS = {
    # part: (carried out at least, silent false refusals at most, misses at most), built-in narrator; where the
    # work left them. The bound on misses is 2%; parts five and six are above it, with the model above all
    # (a sarcasm with no marker word, a wish the reader takes for a request), and this says so rather than hiding it
    "development": (0.85, 0.02, 0.02),
    "held-out": (0.96, 0.03, 0.02),
    "held-out 2": (0.97, 0.03, 0.02),
    "held-out 3": (0.99, 0.01, 0.02),
    "held-out 4": (0.98, 0.02, 0.02),
    "held-out 5": (0.97, 0.03, 0.035),
    "held-out 6": (0.98, 0.02, 0.03),
    "held-out 7": (0.98, 0.02, 0.045),
    "held-out 8": (0.96, 0.035, 0.02),
    "held-out 9": (0.99, 0.01, 0.02),
    "held-out 10": (0.92, 0.055, 0.03),
    "held-out 11": (0.99, 0.01, 0.02),
    "held-out 12": (0.98, 0.015, 0.02),
    "held-out 13": (0.96, 0.03, 0.02),
}


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


@pytest.fixture(scope="module")
def reports(packs) -> dict[tuple[str, str], Report]:
    return {
        (part, voice): measure(rows, packs, voice) for part, rows in PARTS.items() for voice in ("scripted", "model")
    }


def test_the_corpus_holds_four_hundred_rows_over_the_three_stories_both_ways_every_kind(packs):
    rows = [r for part in PARTS.values() for r in part]
    assert len(rows) >= 400
    assert {r.story for r in rows} == {"fantasy_001", "scifi_001", "victorian_001"}
    assert {r.kind for r in rows} == set(KINDS)
    assert sum(r.asks for r in rows) >= 150 and sum(not r.asks for r in rows) >= 150


def test_no_sentence_is_in_two_parts():
    """A held-out row that repeats a row of an earlier part was tuned on before it was read."""
    seen: set[tuple[str, str, str]] = set()
    for rows in PARTS.values():
        keys = {(r.story, r.at, r.action.lower()) for r in rows}
        assert not keys & seen
        seen |= keys


@pytest.mark.parametrize("part", PARTS)
def test_every_row_is_possible_where_it_stands(packs, part):
    """A wanted act the rules would refuse in the row's scene would make the row a test of nothing."""
    assert [(r.action, p) for r in PARTS[part] if (p := problems(r, packs))] == []


@pytest.mark.parametrize("voice", ["scripted", "model"])
@pytest.mark.parametrize("part", PARTS)
def test_each_part_stays_where_the_work_left_it(reports, part, voice):
    report = reports[(part, voice)]
    rates = report.rates()
    failures = [(o.verdict, o.row.action, o.applied) for o in report.failures()]
    carried, silent, misses = FLOORS[part]
    assert rates["misses"] <= misses, failures
    assert rates["silent_false_refusals"] <= silent, failures
    assert rates["wrong_acts"] <= misses, failures  # another act applied to a request: a miss by another name
    assert rates["confirmations"] <= 0.15
    if voice == "scripted":
        assert rates["carried_out"] >= carried, failures


def test_a_request_that_applies_another_act_is_counted_a_wrong_act(packs):
    """Part eight's "I reach into the pooled shadows and pick up the silver circlet" once walked to another place:
    a silent refusal to the corpus's first measure, and worse than one. The measure names it: here a row whose
    words ask another way than the act it wants, so that the reader's right reading is the wrong act."""
    from tests.language.measure import play_row
    from tests.language.rows import Row

    row = Row("fantasy_001", "forest_edge", "go north", ("go hunter_cabin",), "plain")
    outcome = play_row(row, packs[row.story], "scripted")
    assert outcome.verdict == "silent" and outcome.wrong and outcome.applied == ["go misty_path"]
    fine = play_row(next(r for r in DEVELOPMENT if r.asks), packs["fantasy_001"], "scripted")
    assert not fine.wrong
