"""The small words of the lexicon: directions, pronouns, people pointed at, question openings, the player's name."""

from __future__ import annotations

import re

from game.language.lexicon.tables import pairs, phrases, words

DIRECTIONS = pairs(
    "n:north s:south e:east w:west u:up d:down north:north south:south east:east west:west up:up down:down in:in"
    " out:out inside:in outside:out northeast:northeast northwest:northwest southeast:southeast"
    " southwest:southwest ne:northeast nw:northwest se:southeast sw:southwest upstairs:up downstairs:down"
    " northward:north northwards:north southward:south southwards:south eastward:east eastwards:east"
    " westward:west westwards:west topside:up aloft:up upward:up upwards:up downward:down downwards:down"
    " uphill:up downhill:down"
)
QUESTION_WORDS = (
    *sorted(words("where what who whom why how when which")),
    *sorted(f"{w} " for w in words("do does did is are can could have will would were was")),
)
SELF_STATEMENT = re.compile(
    r"^(my name is|my name's|call me|i am|i'm|im|i come from|i came from|i was born|i promise|i swear|i vow"
    r"|my secret|i have a secret|remember that|i love|i hate|i fear)\b"
)
NAME_GIVEN = re.compile(r"\b(?:my name is|my name's|call me|i am called|i'm called)\s+(?P<v>[\w' -]+)", re.I)
"""The player telling their name ("my name is Kael"); the Story Bible and the rules read it."""
MAX_NAME_CHARS = 40


def name_given(text: str) -> str | None:
    """The name the player gives in ``text`` ("call me kael and ..." -> "Kael"), at most three words, or None."""
    match = NAME_GIVEN.search(text)
    if not match:
        return None
    value = re.split(r"\s+and\b|\s+but\b|[.;!,?]", match.group("v"), maxsplit=1, flags=re.I)[0]
    words = value.split()[:3]
    name = " ".join(w if any(c.isupper() for c in w) else w.capitalize() for w in words)[:MAX_NAME_CHARS]
    return name or None


PRONOUNS = words("him her them it he she they")
"""Words by which the player points at someone present without naming them."""
PEOPLE_NOUNS = words(
    "man woman guy lady fellow gentleman stranger person figure chap bloke lad lass boy girl kid sir madam ma'am"
    " mister miss friend buddy pal dude mate"
)
"""Nouns that point at a person without naming them ("the old man", "that lady"): the one present who fits."""
ENDEARMENTS = words("love dear darling sweetheart mate pal buddy friend lad lass son girl boy")
"""Words of fondness after a name a line calls ("ada love, ...", "jory my friend, ..."): not part of the name."""
FOE_NOUNS = words(
    """scoundrel villain brute beast creature monster thing enemy foe fiend rogue thug cur wretch varmint bastard
    devil blighter swine git animal critter vermin pest"""
)
"""Nouns that point at whoever one fights without naming them ("give the scoundrel a thrashing")."""
TITLES = words(
    """reverend vicar father sister brother doctor doc captain sergeant officer madam sir miss mister mr mrs ms one
    highness majesty lordship ladyship excellency"""
)
"""Words a line may call someone by instead of a name ("Reverend, a word?", "Greetings, your highness.")."""
ROLES: tuple[frozenset[str], ...] = tuple(
    words(group)
    for group in phrases(
        """innkeeper landlady landlord barkeep barkeeper barmaid bartender publican tavernkeeper hostess
        | hacker netrunner runner decker | computer ai machine robot bot droid android | highness princess prince royal
        | majesty queen king
        | lordship lord | ladyship lady | reverend vicar priest parson padre chaplain father
        | doctor doc medic ripperdoc surgeon physician | fixer dealer broker | scientist researcher professor boffin
        | boatman ferryman fisherman sailor | hunter huntsman woodsman | harbourmaster harbormaster
        | keeper lightkeeper | thief bandit rogue cutthroat brigand outlaw | sage scholar elder | dryad nymph"""
    )
)
"""Words that name the same kind of person: "the innkeeper" is the landlady, "hacker girl" the netrunner."""


PLACE_KINDS: tuple[frozenset[str], ...] = tuple(
    words(group)
    for group in phrases(
        """inn pub tavern taproom alehouse bar saloon | church chapel kirk | office study | cottage house home hut cabin
        lodge | stair stairs staircase steps stairway | cave cavern grotto | shop market stall bazaar | clinic surgery
        | lift elevator | loft attic | cellar basement vault | hall chamber | quay dock docks wharf pier harbour"""
    )
)
"""Words that name the same kind of place ("the pub": a taproom)."""


def place_kin(word: str) -> frozenset[str]:
    """The words that name the same kind of place as ``word`` (itself included)."""
    return frozenset({word}).union(*(group for group in PLACE_KINDS if word in group))


def role_kin(word: str) -> frozenset[str]:
    """The words that name the same kind of person as ``word`` (itself included)."""
    return frozenset({word}).union(*(group for group in ROLES if word in group))


DIRECTION_WORDS = "|".join(sorted((re.escape(d) for d in DIRECTIONS if len(d) > 2), key=len, reverse=True))
ARTICLE = r"(?:(?:the|a|an|some|this|that|your|my)\s+)"
SIMPLE_GO = pairs(
    "ascend:up climb:up climb_up:up go_up:up descend:down climb_down:down go_down:down enter:in go_in:in"
    " go_inside:in go_out:out"
)
"""Whole lines that go one way ("climb": up)."""
ROUTE_STARTS = frozenset({"back", "onward", "onwards", "homeward", "straight"})
"""Words that start a movement with no verb: "..., then back out to the street", "onward to the gate"."""
