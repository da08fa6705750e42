"""Finding the story's people and things by the player's words: names, misspellings and descriptions (issue 41).

:func:`match` finds which of some candidates a phrase names, as the rest of the game matches names
(:func:`game.text.best_match`), then, when nothing is named, by one misspelt word forgiven
(:func:`game.language.spelling.nearest` over the words of the names in scope) or by the names run together
("stimpack"); :func:`person` finds the person present a phrase points at, by a name, a pronoun, whom the line calls
by name, or a description ("the elf": a word of her role; "the old man": the one man here, old by name). A match
found only so is ``guessed``: a consequential act asked with it is asked back first (``game.world.asked``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from game.language.lexicon import AFTER_THING, KIN_NOUNS, PEOPLE_NOUNS, role_kin
from game.language.reading import Reading
from game.language.spelling import nearest
from game.text import STOPWORDS, best_match, keywords, stem
from game.world.acts import Scene
from game.world.content import ContentPack

_HIM = {"he": "he", "him": "he", "his": "he", "she": "she", "her": "she", "hers": "she", "they": "they"}
_MALE = frozenset(["man", "guy", "fellow", "gentleman", "chap", "bloke", "lad", "boy", "sir", "mister"])
_FEMALE = frozenset(["woman", "lady", "girl", "lass", "madam", "miss"])
_PLURALS = {"elves": "elf", "men": "man", "women": "woman", "dwarves": "dwarf", "wolves": "wolf", "thieves": "thief"}


def _split(text: str) -> list[str]:
    return text.split()


def stems(text: str) -> frozenset[str]:
    """The stemmed content words of ``text``, irregular plurals made singular first ("elves": elf)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(stem(_PLURALS.get(w, w)) for w in words if w not in STOPWORDS)


def named(pack: ContentPack, pool: Iterable[str], kind: str) -> list[tuple[str, list[str]]]:
    table: dict[str, Any] = {"item": pack.items, "npc": pack.npcs, "enemy": pack.enemies}
    return [(i, list(table[kind][i].names)) for i in pool if i in table[kind]]


def match(text: str, candidates: list[tuple[str, list[str]]]) -> tuple[str | None, bool]:
    """The candidate ``text`` names (found, guessed): by name, else by one misspelt word forgiven."""
    if not text.strip() or not candidates:
        return None, False
    found = best_match(text, candidates)
    if found is not None:
        return found, False
    words = {w for _, names in candidates for name in names for w in re.findall(r"[a-z0-9]+", name.lower())}
    typed = re.findall(r"[a-z0-9']+", text.lower())
    fixed = [w if w in _LITTLE else nearest(w, words) or w for w in typed]
    if fixed != typed:
        found = best_match(" ".join(fixed), candidates)
        if found is not None:
            return found, True
    run = "".join(w for w in typed if w not in _LITTLE)  # "stimpack": the Stim Pack
    runs = {re.sub(r"[^a-z0-9]", "", n.lower()): cid for cid, names in candidates for n in names}
    near = run if run in runs else nearest(run, runs) if len(run) >= 5 else None  # "stimpak" too
    return (runs[near], True) if near is not None else (None, False)


_LITTLE = frozenset(_split("the a an my your his her this that these those some of to from with on in at"))


# ------------------------------------------------------------------ people
def person(phrase: str, scene: Scene, reading: Reading | None = None) -> tuple[str | None, bool]:
    """The person present ``phrase`` points at (found, guessed): by name, pronoun, description, or, for no phrase,
    the one the line addresses or the one person here."""
    here = scene.people
    phrase = re.sub(r"^(?:the|that|this|a|an|to|with|my|your|dear|good)\s+", "", phrase.lower().strip(" ,.!?"))
    phrase = re.sub(r"^(him|her|them|you)\s+[a-z]+ly$", r"\1", phrase)  # "speak to her softly": her
    if not phrase or phrase in ("you", "u", "there", "everyone", "all", "all of you"):
        if reading is not None and reading.addressee and (called := person(reading.addressee, scene))[0]:
            return called
        return (here[0], False) if len(here) == 1 else (None, False)
    if phrase in _HIM:
        fits = [n for n in here if scene.pack.npcs[n].pronouns.split("/")[0] == _HIM[phrase]] or here
        return (fits[0], False) if len(fits) == 1 else (None, False)
    if (kin := KIN_OF.search(phrase)) is not None and not any(
        phrase in (n.lower() for n in scene.pack.npcs[p].names) for p in here
    ):
        phrase = kin.group("kin")  # "the fisherman's wife" is his wife, not the fisherman; "the keeper's daughter"
    found, guessed = match(phrase, named(scene.pack, here, "npc"))
    if found is not None:
        return found, guessed
    return _by_description(phrase, scene), True


KIN_OF = re.compile(rf"\b[a-z]+'s\s+(?P<kin>(?:{'|'.join(sorted(KIN_NOUNS))})(?:\s.*)?)$")
"""Someone named as another's kin or fellow ("the fisherman's wife"): the one named last."""


def _by_description(phrase: str, scene: Scene) -> str | None:
    """The one person here ``phrase`` describes: "the elf" (her role), "the old man" (the one man, old by name)."""
    words = stems(phrase)
    if not words:
        return None
    kin = {stem(w): {stem(k) for k in role_kin(w)} for w in phrase.split()}  # "innkeeper": the landlady too
    fits = []
    for npc_id in scene.people:
        npc = scene.pack.npcs[npc_id]
        known = stems(" ".join([npc.role, *npc.names]))
        nouns = {w for w in phrase.split() if w in PEOPLE_NOUNS}
        gender = npc.pronouns.split("/")[0]
        if (nouns & _MALE and gender != "he") or (nouns & _FEMALE and gender != "she"):
            continue
        rest = words - {stem(n) for n in PEOPLE_NOUNS}
        if (all(kin.get(w, {w}) & known for w in rest) and (rest or nouns)) or (nouns and len(scene.people) == 1):
            fits.append(npc_id)
    return fits[0] if len(fits) == 1 else None


def elsewhere(phrase: str, pack: ContentPack) -> str | None:
    """The story's person ``phrase`` names, wherever they are (only by a name they go by)."""
    return best_match(phrase, [(i, list(n.names)) for i, n in pack.npcs.items()]) if phrase.strip() else None


def item_names(scene: Scene, pool: Iterable[str]) -> list[str]:
    return [n for i in pool for n in scene.pack.items[i].names]


def full_name(target: str, names: Iterable[str]) -> bool:
    said = stems(target)
    return any(stems(n) and stems(n) <= said for n in names)


def headed(target: str, names: list[str]) -> bool:
    """Whether ``target`` says the thing by its head noun, or by no noun of its own: "a healing potion" is not the
    Healing Herb whose word it shares before its own noun ("the herb", "the healing one", "it" are), so it is
    asked back, never taken for it."""
    words = [stem(w) for w in keywords(re.split(r"\s+of\s+", target)[0]) if w not in AFTER_THING]
    said = {stem(w) for name in names for w in keywords(name)}
    if len(words) < 2 or not all(w in said for w in words[:-1]):
        return True  # "my ramen real quick", "the harp for him one last time": the thing, then other words
    return words[-1] in said or words[-1] in ("one", "stuff", "thing", "things")
