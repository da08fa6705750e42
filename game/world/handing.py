"""What a line hands to the person it is said to, or asks of them (issue 41): gifts told with no verb of giving
("here's everything for the harp, elvin: the branch and the moonvine strand"), things the person is asked to take
("Goro, take this pearl off my hands"), and what a line said to someone by name asks of them ("Ada, put down the
poker": to talk to her). :mod:`game.world.asked` reads a line through these before the player's own acts.
"""

from __future__ import annotations

import re

from game.language.lexicon import (
    GIFT_OPENERS,
    GREETINGS,
    HANDING_OVER,
    OWN_FRAMES,
    PAST,
    PRONOUNS,
    leading,
)
from game.language.reading import Clause, Reading
from game.text import whole_words
from game.world import names, wares
from game.world.acts import Act, Found, Scene
from game.world.rules.trade import offered_price, traders_here

_TRANSFER = frozenset({"take", "accept", "have", "keep"})
_HANDED = re.compile(
    r"(?:(?:^|\byou(?:'d|'ll| would| will| to)?\s+|\bplease\s+)(?:have|take|accept|keep)"
    r"|\byou(?:'d|'ll| would| will| to)?\s+(?:buy|bought)|^(?:buy|purchase)(?=\s.*\soff me$))\s+"
    r"(?P<thing>(?:this|these|that|my|the|some|it|them)\b.*?)"
    r"(?:\s+(?:as a gift|as a present|from me|off me|off my hands))?$"
)
"""A thing the person spoken to is asked to take: "please have my ramen", "I'd like you to have this candle",
"I'd be honoured if you'd accept this pearl", "I would be honoured if you bought this pearl"."""
_YOURS = re.compile(r"^(?:here,?\s+)?(?:it's|it is|this is|that's|these are|they're)\s+(?:yours|for you)\b")
"""Words that hand over what the line named: "Here, it's yours."."""


def _gift(text: str) -> str:
    """What a line hands to the person it is said to ("here's a bottle for your trouble": a bottle), or ""."""
    opener = leading(text, GIFT_OPENERS)
    rest = text[len(opener) :].strip()
    marker = rest.find(" for you")
    if not opener or marker < 0:
        return ""
    thing = rest[:marker]
    for ending in ("'s", " is", " are"):
        thing = thing.removesuffix(ending)
    return thing.strip()


def handed_over(reading: Reading, scene: Scene, addressee: str | None) -> tuple[Act, ...]:
    """A gift told with no verb of giving, to the person the line calls or the one here ("yo runner, brought you
    some noodles, here"; "Miss Crane, I found your mother's locket. Please, have it."): words that hand over
    (:data:`HANDING_OVER`) and the things carried named by their names, in the order said (several only when
    listed: "here's everything for the harp, elvin: the branch and the moonvine strand"); never in a line that
    refuses or supposes."""
    if any(c.negated or c.mood in ("hypothetical", "wish", "question") for c in reading.clauses):
        return ()
    if all(c.mood == "report" or _told_of(c.text) for c in reading.clauses):
        return ()  # "your father gave me a herb for you": told, not handed
    text = reading.text.lower()
    opened = re.match(r"^here\b", text) is not None  # "here elvin, the branch from the tree"
    if not opened and not any(whole_words(phrase).search(text) for phrase in HANDING_OVER):
        return ()
    who = addressee or (scene.people[0] if len(scene.people) == 1 else None)
    said = re.findall(r"[a-z]+", text)
    at = {}  # each thing carried named by its name's last word ("your mother's locket"), where it is first said
    for item in dict.fromkeys(scene.carried):
        places = [
            said.index(n.lower().split()[-1]) for n in scene.pack.items[item].names if n.lower().split()[-1] in said
        ]
        if places:
            at[item] = min(places)
    if who is None or not at:
        return ()
    if len(at) > 1 and not re.search(r":|\band\b|&|\+", text):  # several named, not listed: which is unsaid
        return ()
    return tuple(Act("give", item, who) for item in sorted(at, key=at.__getitem__))


def _told_of(text: str) -> bool:
    """Whether a clause tells what someone else did ("your father gave me a herb")."""
    words = text.split()
    return len(words) > 2 and words[0] in ("your", "his", "her", "their", "the", "my") and words[2] in PAST


def handed_to(clause: Clause, scene: Scene) -> str | None:
    """The one person here a line that names no one hands something carried ("Here, take this pearl off my
    hands": the pearl is the player's, so it is theirs to take)."""
    handed = _HANDED.search(clause.text)
    if handed is None or len(scene.people) != 1 or handed["thing"].split()[0] not in ("this", "these", "my"):
        return None  # "accept the pact" is the player's own act
    item, guessed = names.match(handed["thing"], names.named(scene.pack, scene.carried, "item"))
    return scene.people[0] if item is not None and not guessed else None


def addressed(clause: Clause, who: str | None, scene: Scene, line: str = "") -> Found | None:
    """A clause said to ``who`` by name that is theirs to do, not the player's ("Ada, put down the poker"): what
    the player asks is to talk to them, or to give or sell them what they are asked to take ("captain, take
    this bread", "Goro, take this pearl off my hands", "Reverend, I'd like you to have this candle"), or to buy
    what they sell ("landlady, a toddy"). "it" handed is the thing ``line`` names ("I've brought your mother's
    circlet. Here, take it.")."""
    if who is None:
        return None
    plain = " ".join(w for w in clause.text.split() if not (len(w) > 4 and w.endswith("ly")) and w != "please")
    handed = _HANDED.search(plain)  # "may I please take the shard": the player's own take, not a gift
    if leading(plain, OWN_FRAMES) and handed is None:
        return None  # "Reverend, I'll go down to the crypt": the player's own act
    handed = (
        handed or _HANDED.search(clause.text) or _HANDED.search(clause.core)
    )  # "would you be so kind as to buy this pelt off me"
    first, _, rest = clause.core.partition(" ")
    gift = _gift(clause.text) or (handed["thing"] if handed else "") or ("it" if _YOURS.match(clause.text) else "")
    thing = gift or (rest if first in _TRANSFER else "")
    if thing in PRONOUNS:
        thing = next((n for n in names.item_names(scene, scene.carried) if n.lower() in line), thing)
    if thing or gift:
        item, _ = names.match(thing, names.named(scene.pack, scene.carried, "item"))
        if item is not None:
            buys = who in traders_here(scene.pack, scene.state) and offered_price(scene.pack, who, item)
            return Found(acts=(Act("sell" if buys else "give", item, who),), note=f"handed to {who}")
    if clause.command.verb in ("other", "take", "buy"):
        sold = wares.sold_here(clause.core, scene, only=who) or wares.asked_for(clause.core, scene, only=who)
        if sold is not None:
            return Found(acts=(sold,), note=f"asked of {who}: {sold.target}")
    if clause.command.verb in ("give", "go", "rest", "use", "take", "drop", "other", "examine", "say"):
        return Found(acts=(Act("talk", who, topic=_topic_of(clause)),), note=f"asked of {who}")
    return None


def _topic_of(clause: Clause) -> str:
    if clause.core in GREETINGS or (clause.command.verb == "talk" and not clause.command.topic):
        return ""  # "yo, hacker girl": a greeting asks nothing
    return f"{clause.core}?"
