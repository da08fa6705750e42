"""Amounts in words: the story's money, a reward's gains, a thing carried several times (issue 46).

Every line that counts goes through here, so "1 shilling", "+30 exp" (no "+0 shillings") and "Stim Pack ×5" read
the same in the rules' messages, the inventory and the sidebar. The count's mark is an ASCII "x": the
multiplication sign is two cells wide in a CJK terminal (``tests/tui/test_play_screen.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from game.world.content import ContentPack


def money(amount: int, pack: ContentPack) -> str:
    """An amount of the story's money, as the player reads it ("25 gold", "1 shilling", "15 yen")."""
    story = pack.story
    if abs(amount) != 1:
        return f"{amount} {story.currency}"
    one = story.currency_one or _singular(story.currency)
    return f"{amount} {one}"


def _singular(plural: str) -> str:
    """One of a plural money name ("shillings": shilling); a name that is no plural stays ("gold", "yen")."""
    last = plural.split()[-1] if plural.split() else plural
    if last.endswith("s") and not last.endswith(("ss", "us", "is")):
        return plural[:-1]
    return plural


def gains(pack: ContentPack, *, exp: int = 0, gold: int = 0) -> list[str]:
    """What a reward adds, each part that adds something ("+15 exp", "+1 shilling"): nothing is told as "+0"."""
    parts = [f"+{exp} exp"] if exp else []
    return parts + ([f"+{money(gold, pack)}"] if gold else [])


def counted(names: Iterable[str]) -> list[str]:
    """Names in the order first seen, each once, with how many when more than one ("Stim Pack x5")."""
    counts = Counter(names)
    return [how_many(name, counts[name]) for name in counts]


def how_many(name: str, count: int) -> str:
    """``name`` with its count when there are several ("Stim Pack x5"), else as it is."""
    return f"{name} x{count}" if count > 1 else name
