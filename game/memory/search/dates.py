"""Calendar dates a memory's keywords carry: the date it was said on, and the dates its relative words name.

A memory recorded with a calendar date (``when`` such as "1:56 pm on 8 May, 2023", as a loaded conversation's
turns carry) is indexed for keywords with that date and with the absolute dates its relative words resolve to
("yesterday" said on 8 May 2023 is 7 May 2023; "last Saturday", "two weeks ago", "last month", "last year"), so a
question naming a date or a month ("what did Gina find on 1 February, 2023?", "in July 2023") finds it. A ``when``
that holds no calendar date (a game's clock, "Day 2, 08:00") adds nothing. Measured on LoCoMo
(``docs/benchmarks.md``, LoCoMo evidence recall).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple": 2}

_DATE = re.compile(r"\b(\d{1,2})\s+(" + "|".join(MONTHS) + r")\.?,?\s+(\d{4})\b", re.I)
_DATE_US = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2}),?\s+(\d{4})\b", re.I)
_RELATIVE = re.compile(
    r"\b(?:(yesterday|today|tonight|this morning)"
    r"|last\s+(night|week|weekend|month|year|" + "|".join(WEEKDAYS) + r")"
    r"|(a|an|one|two|three|four|five|six|few|couple|\d+)\s+(?:of\s+)?(day|week|month|year)s?\s+ago)\b",
    re.I,
)


def calendar_date(when: str) -> date | None:
    """The calendar date ``when`` holds ("8 May, 2023" or "May 8, 2023" in it), else None."""
    found = _DATE.search(when)
    if found:
        day, month, year = int(found[1]), MONTHS.index(found[2].lower()) + 1, int(found[3])
    elif found := _DATE_US.search(when):
        month, day, year = MONTHS.index(found[1].lower()) + 1, int(found[2]), int(found[3])
    else:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _months_back(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


def _resolve(said: date, match: re.Match[str]) -> tuple[date, str]:
    """The date a relative phrase said on ``said`` points to, and how precise it is ("day", "month", "year")."""
    word, last, count, unit = (g.lower() if g else None for g in match.groups())
    if word is not None:
        return (said - timedelta(days=1), "day") if word == "yesterday" else (said, "day")
    if last is not None:
        if last == "night":
            return said - timedelta(days=1), "day"
        if last in ("week", "weekend"):
            back = (said.weekday() + 2) % 7 or 7 if last == "weekend" else 7  # the Saturday before
            return said - timedelta(days=back), "day"
        if last == "month":
            return _months_back(said, 1), "month"
        if last == "year":
            return date(said.year - 1, 1, 1), "year"
        back = (said.weekday() - WEEKDAYS.index(last)) % 7 or 7
        return said - timedelta(days=back), "day"
    assert count is not None and unit is not None
    n = int(count) if count.isdigit() else _NUMBERS[count]
    if unit == "day":
        return said - timedelta(days=n), "day"
    if unit == "week":
        return said - timedelta(weeks=n), "day"
    if unit == "month":
        return _months_back(said, n), "month"
    return date(said.year - n, 1, 1), "year"


def spelled(day: date, precision: str = "day") -> str:
    """``day`` as its keywords: "7 may 2023" (a day), "may 2023" (a month), "2023" (a year)."""
    if precision == "year":
        return str(day.year)
    if precision == "month":
        return f"{MONTHS[day.month - 1]} {day.year}"
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def date_terms(when: str, text: str) -> str:
    """The dates to index beside ``text`` said at ``when``: its own date, then what its relative words name
    ("" when ``when`` holds no calendar date)."""
    said = calendar_date(when)
    if said is None:
        return ""
    terms = [spelled(said)]
    for match in _RELATIVE.finditer(text):
        resolved = spelled(*_resolve(said, match))
        if resolved not in terms:
            terms.append(resolved)
    return " ".join(terms)
