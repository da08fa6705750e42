"""Sixty natural sentences a new player might type (issue 41), judged with the built-in narrator.

``tests/language/natural60.py`` was written before the work from the content files and README alone, kept
outside the repository and judged once when the work was done: 49 of the 60 were read right, short of the
issue's 57. Four of the eleven were then fixed by general rules (a thing asked for with no verb is bought from
the trader here, a name between two commas is whom the line is said to, "carry on north" goes, a thing carried
and handed over goes to the one person here); this test holds the 53 reached, and ``docs/understanding.md`` lists
the seven still read wrong. ``python -m tests.language.natural tests/language/natural60.py`` prints each
verdict.

``tests/language/natural60b.py`` is a second sixty, written the same way by another writer after the reading was
built: 42 read right at the first reading, 46 after the asking back of ``game.world.guess`` and the player's own
figures asked in any words; this test holds the 46. ``tests/language/natural60c.py``, a third sixty written while
B was tuned on and judged once after: 51 read right (49 with the code before), not tuned on; 50 once the asking
back was kept from lines that ask someone else to act ("give me 1000 gold") and from deals the rules tell.
``natural60e.py``, ``natural60f.py`` and ``natural60g.py`` were written in round eleven beside corpus parts 11, 12
and 13, from the content alone: E 56 of 60 read right at its first reading (the judge counted one more wrong, "no
longer needs it" in an item's own words), F 52 and G 51 (G read after part 12's rules); 59, 54 and 53 now.
"""

from __future__ import annotations

import pytest

from tests.language.acts import shipped_packs
from tests.language.natural import judge
from tests.language.natural60 import NATURAL
from tests.language.natural60b import NATURAL as NATURAL_B
from tests.language.natural60c import NATURAL as NATURAL_C
from tests.language.natural60d import NATURAL as NATURAL_D
from tests.language.natural60e import NATURAL as NATURAL_E
from tests.language.natural60f import NATURAL as NATURAL_F
from tests.language.natural60g import NATURAL as NATURAL_G


@pytest.fixture(scope="module")
def packs():
    return shipped_packs()


def test_the_sixty_are_sixty_over_the_three_stories():
    assert len(NATURAL) == 60
    assert {s.story for s in NATURAL} == {"fantasy_001", "scifi_001", "victorian_001"}


def test_at_least_fifty_four_of_the_sixty_are_read_right(packs):
    verdicts = {s.action: judge(s, packs[s.story]) for s in NATURAL}
    wrong = {action: why for action, why in verdicts.items() if why}
    assert len(NATURAL) - len(wrong) >= 54, wrong


@pytest.mark.parametrize(
    ("sixty", "right"),
    [(NATURAL_B, 54), (NATURAL_C, 51), (NATURAL_D, 58), (NATURAL_E, 59), (NATURAL_F, 54), (NATURAL_G, 53)],
    ids=["B", "C", "D", "E", "F", "G"],
)
def test_the_later_sixties_stay_where_the_work_left_them(packs, sixty, right):
    assert len(sixty) == 60
    verdicts = {s.action: judge(s, packs[s.story]) for s in sixty}
    wrong = {action: why for action, why in verdicts.items() if why}
    assert len(sixty) - len(wrong) >= right, wrong
