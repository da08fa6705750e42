"""The checker's static text check: things the texts mention that the story does not have."""

from __future__ import annotations

import re
from collections.abc import Iterator

from game.checker.report import Mention
from game.world.content import (
    ContentPack,
    KnowledgeEntry,
    Node,
    NodeVariant,
    Npc,
    NpcMood,
    Objective,
    Quest,
    Region,
    Story,
)
from game.world.texts import AuthorText, TextField, texts_of

# Nouns of things a player could carry. Scenery (door, tree, fire, lantern, bench) is left out on purpose.
# fmt: off
THING_NOUNS = frozenset([
    "letter", "note", "map", "key", "amulet", "ring", "necklace", "pendant", "locket", "brooch", "charm",
    "talisman", "medallion", "scroll", "tome", "book", "journal", "diary", "potion", "elixir", "tonic", "vial",
    "flask", "bottle", "draught", "salve", "ointment", "herb", "sword", "dagger", "knife", "blade", "axe", "bow",
    "longbow", "crossbow", "arrow", "spear", "staff", "wand", "shield", "helm", "helmet", "armour", "armor",
    "cloak", "mail", "gauntlet", "coin", "purse", "gem", "jewel", "crystal", "shard", "orb", "idol", "relic",
    "feather", "pelt", "fang", "claw", "scale", "crown", "circlet", "harp", "lute", "flute", "horn", "bell",
    "keycard", "card", "chip", "datachip", "datapad", "drive", "disk", "implant", "cell", "battery", "fuse",
    "relay", "glove", "jacket", "pistol", "gun", "rifle", "baton", "wire", "graft", "stim", "syringe", "injector",
    "core", "module", "sensor", "pearl", "ramen",
])
# fmt: on
# Verbs that put a thing in someone's hands, in what people say and what quests ask.
# fmt: off
_HANDLING = frozenset([
    "bring", "brought", "take", "took", "give", "gave", "hand", "handed", "carry", "carrying", "carried", "find",
    "found", "fetch", "deliver", "keep", "kept", "hold", "holding", "pocket", "pick",
])
# fmt: on
# A place's text names a thing the player could take when it is the subject of a verb of lying somewhere.
_LYING = re.compile(
    r"\b(?:a|an|the|some|one)\s+(?:[a-z-]+\s+){0,2}([a-z]+)\s+(?:lies|lie|lying|rests|sits|hangs|glints|waits|stands)\b",
    re.IGNORECASE,
)
PERSON_TITLES = (
    "Dr.",
    "Doctor",
    "Doc",
    "Captain",
    "Lord",
    "Lady",
    "Sir",
    "Queen",
    "King",
    "Prince",
    "Princess",
    "Master",
    "Elder",
    "Brother",
    "Sister",
    "Old",
)
_TITLED = re.compile(r"\b(" + "|".join(re.escape(t) for t in PERSON_TITLES) + r")\s+([A-Z][a-z]+)")
_DIRECTIVE = re.compile(
    r"\b(?:talk to|speak to|speak with|ask|find|meet|visit|bring (?:it|them|this) to|give (?:it|them) to)\s+"
    r"(?:the\s+)?([A-Z][\w.-]+(?:\s+[A-Z][\w-]+)*)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


TEXTS_READ: frozenset[TextField] = frozenset(
    {
        (Story, "intro"),
        (Node, "description"),
        (NodeVariant, "text"),
        (Npc, "greeting"),
        (Npc, "topics"),
        (NpcMood, "greeting"),
        (NpcMood, "topics"),
        (Quest, "description"),
        (Objective, "description"),
    }
)
"""The texts :func:`mentions` reads: the intro, the places, what people say, the quests.

Of the author texts (:func:`game.world.texts.author_texts`) these are the
ones that put things and people within the player's reach; names, lore (where
the dead and the legendary are written), the items' and enemies' own texts
and the narrator's instructions are left alone, to keep false alarms rare.
"""

_NAMES: frozenset[TextField] = frozenset(
    {(Node, "name"), (Region, "name"), (Story, "title"), (KnowledgeEntry, "title"), (KnowledgeEntry, "keywords")}
)
"""Names that are not people's but may be named like them: places, regions, the story, lore entries."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def mentions(pack: ContentPack) -> list[Mention]:
    """Things the texts mention that the story does not have: a heuristic, kept strict to keep false alarms rare.

    - items: a noun of :data:`THING_NOUNS` (things a player could carry) that
      no item, person or enemy has among the words of its name, aliases or id,
      where the text puts it within the player's reach: a sentence of the
      intro that speaks of "you"; in a person's words or a quest, what follows
      a verb of handling (:data:`_HANDLING`: bring, give, carry, find, ...)
      to the end of its clause; in a place's text, the subject of a verb of lying somewhere ("a
      rusty key lies in the straw"); and not "a bottle of <an item>". Scenery
      ("a ring of white stones cradles the spring", "monitors scroll the
      feeds", "scrolls rest in alcoves") is not reported. Each noun once.
    - people: a titled name ("Captain Mira") or a capitalised name the player
      is told to find, meet, talk to or ask, when no word of it names a
      person, enemy, place, region, item or lore entry (the dead and the
      legendary are written into the knowledge base).
    """
    known: set[str] = set()
    for thing in [*pack.items.values(), *pack.npcs.values(), *pack.enemies.values()]:
        for name in thing.names:
            known.update(_singular(w) for w in _words(name))
    people = set(known)
    for named in texts_of(pack, _NAMES):
        people.update(_words(named.text))
    out: list[Mention] = []
    seen: set[tuple[str, str]] = set()
    for told in texts_of(pack, TEXTS_READ):
        where, text = told.where, told.text
        for start, end in _thing_spans(told):
            word = text[start:end].lower()
            noun = _singular(word)
            if noun not in THING_NOUNS or noun in known or word in known or ("item", noun) in seen:
                continue
            after = _words(text[end:])[:4]
            if after[:1] == ["of"] and any(_singular(w) in known for w in after[1:]):
                continue  # "a bottle of amber tonic": the tonic is the item
            seen.add(("item", noun))
            out.append(Mention(where, "item", noun, _around(text, start, end)))
        for match in [*_TITLED.finditer(text), *_DIRECTIVE.finditer(text)]:
            phrase = match.group(0) if match.re is _TITLED else match.group(1)
            words = [w for w in _words(phrase) if w.capitalize() not in PERSON_TITLES and w != "dr"]
            if not words or any(w in people for w in words) or ("person", phrase) in seen:
                continue
            seen.add(("person", phrase))
            out.append(Mention(where, "person", phrase, _around(text, match.start(), match.end())))
    return out


def _thing_spans(told: AuthorText) -> Iterator[tuple[int, int]]:
    """Where a text may name a thing within the player's reach (see :func:`mentions`)."""
    text = told.text
    if told.file == "map.json":
        for match in _LYING.finditer(text):
            yield match.start(1), match.end(1)
        return
    if (told.model, told.field) == (Story, "intro"):  # what the player sets out with
        offset = 0
        for sentence in _SENTENCE_END.split(text):
            offset = text.index(sentence, offset)
            if {"you", "your"} & set(_words(sentence)):
                for match in re.finditer(r"[A-Za-z]+", sentence):
                    yield offset + match.start(), offset + match.end()
            offset += len(sentence)
        return
    for verb in re.finditer(r"[A-Za-z]+", text):  # the things handled: the words after the verb, to the clause's end
        if verb.group(0).lower() in _HANDLING:
            clause = re.match(r"[^.,;:!?]*", text[verb.end() :])
            assert clause is not None
            for match in re.finditer(r"[A-Za-z]+", clause.group(0)):
                yield verb.end() + match.start(), verb.end() + match.end()


def _around(text: str, start: int, end: int, width: int = 40) -> str:
    left = max(0, start - width)
    right = min(len(text), end + width)
    return ("..." if left else "") + text[left:right].strip() + ("..." if right < len(text) else "")
