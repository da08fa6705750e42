"""The LoCoMo retrieval levers kept (issue 32, item 6): calendar dates in a memory's keywords (``dates.py``)."""

from __future__ import annotations

from datetime import date

import pytest

from game.memory.search.dates import calendar_date, date_terms
from game.memory.search.hybrid import HybridIndex
from game.memory.search.indexing import IndexItem

SAID = "1:56 pm on 8 May, 2023"  # a Monday


def test_calendar_date_reads_both_orders_and_refuses_a_game_clock() -> None:
    assert calendar_date(SAID) == date(2023, 5, 8)
    assert calendar_date("October 13, 2023") == date(2023, 10, 13)
    assert calendar_date("Day 2, 08:00") is None
    assert calendar_date("31 February, 2023") is None


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("I went yesterday", "7 may 2023"),
        ("we did it last Saturday", "6 may 2023"),
        ("last weekend was fun", "6 may 2023"),
        ("two weeks ago I ran", "24 april 2023"),
        ("3 days ago", "5 may 2023"),
        ("last month I painted", "april 2023"),
        ("a few months ago", "february 2023"),
        ("last year", "2022"),
    ],
)
def test_relative_words_resolve_against_the_date_said(text: str, resolved: str) -> None:
    assert date_terms(SAID, text) == f"8 may 2023 {resolved}"


def test_no_calendar_date_adds_nothing() -> None:
    assert date_terms("Day 3, dusk", "I went there yesterday") == ""
    assert date_terms("", "last week") == ""


def test_a_question_naming_a_date_finds_the_memory_said_then() -> None:
    index = HybridIndex("t", None, None)  # keywords only: what the dates change
    index.add(
        [
            IndexItem("a", "Gina: I found a great rack for the store", {"when": "9:00 am on 20 March, 2023"}),
            IndexItem("b", "Gina: I found a great rack for the store", {"when": "9:00 am on 1 February, 2023"}),
            IndexItem("c", "Gina: we found a great rack for the store yesterday", {"when": "9:00 am on 2 June, 2023"}),
            IndexItem("d", "Gina: the store had a great day", {"when": "Day 2, 08:00"}),
        ]
    )
    # identical texts: without the dates they tie, and the tie goes to "a"
    assert index.search("what did Gina find on 1 February, 2023?", 1).hits[0].id == "b"
    assert index.search("found a rack in March 2023", 1).hits[0].id == "a"
    assert index.search("what rack did Gina find on 1 June 2023?", 1).hits[0].id == "c"  # "yesterday" resolved
