"""A story choice in the player's words (issue 41): "kneel", "accept the pact", "I take his outstretched hand",
"take the bribe". A choice is recognised only where it can be made (its place), in its own words, its description's,
or the thing it is about; where it cannot be made yet, the story's own words say what is missing.
"""

from __future__ import annotations

import re

from game.language.lexicon import is_verb
from game.language.reading import Clause
from game.language.spelling import nearest
from game.text import whole_words
from game.world.acts import Act, Found, Scene
from game.world.conditions import missing
from game.world.content import StoryChoice
from game.world.names import stems

CHOICE_VERBS = frozenset({"other", "use", "say"})
"""Verbs whose words may make a story choice before their plain act ("play the harp" at the throne); another verb's
clause is its act (``content check`` warns an author whose choice's name reads as one: ``choice_misreads``)."""


def choice(said: Clause, scene: Scene) -> Found | None:
    """A story choice the clause makes in its own words ("kneel", "accept the pact"), where it can be made here; a
    misspelt first word is read as the one choice word it is nearest ("negociate wiht him"), and asked back."""
    here = [c for c in scene.pack.story.choices if not c.condition.at_node or c.condition.at_node == scene.node]
    for choice in here:  # a choice is recognised only where it can be made
        said_words = [k for k in choice.keywords if whole_words(_common(k)).search(_common(said.core))]
        if said_words:
            plain = said.core == choice.name.lower() or any(  # its name, as the choices show it, or its own words
                said.core.startswith(k.lower()) or said.core.split()[0] == k.lower() for k in said_words
            )
            return _chosen(choice, scene, guessed=not plain)
    first = said.core.split()[0] if said.core else ""
    if not first or is_verb(first):
        return None
    single = {k.lower(): c for c in here for k in c.keywords if " " not in k}
    fixed = nearest(first, list(single))
    return _chosen(single[fixed], scene, guessed=True) if fixed is not None else None


def choice_taken(target: str, scene: Scene) -> str | None:
    """The story choice here that a thing taken names, when no item does ("I'll take your purse": the
    harbourmaster's purse, a bargain): one of its own words in the target. Asked back."""
    words = set(re.findall(r"[a-z]+", target.lower()))
    here = [c for c in scene.pack.story.choices if c.condition.at_node == scene.node]
    found = [c.id for c in here if any(k.lower() in words for k in c.keywords)]  # the object: "the bribe", a noun
    if len(found) != 1 or missing(next(c for c in here if c.id == found[0]).condition, scene.state, scene.pack):
        return None
    return found[0]


def _chosen(choice: StoryChoice, scene: Scene, *, guessed: bool) -> Found:
    gaps = missing(choice.condition, scene.state, scene.pack)
    if gaps:
        return Found(refusal=f"Not yet: {gaps[0]}.", note=f"choice {choice.id}: {'; '.join(gaps)}")
    return Found(acts=(Act("choice", choice.id, guessed=guessed),), note=f"choice {choice.id}")


_DETERMINERS = re.compile(r"\b(?:the|your|his|her|their|its|this|that|my)\b")
_OBJECTS = re.compile(r"\b(?:him|her|you|them|it)$")


def _common(words: str) -> str:
    """A choice's words and a clause's in common form: any determiner "the", a last pronoun "him" ("accept your
    offer" says "accept the offer"; "join you", said to him, "join him")."""
    return _OBJECTS.sub("him", _DETERMINERS.sub("the", words.lower()))


def described_choice(said: Clause, scene: Scene) -> str | None:
    """The story choice here whose own description the clause tells ("I take his outstretched hand": "Take the
    Shadow Lord's outstretched hand and become his herald"): two of its words or more, names aside."""
    names = {w for n in scene.pack.npcs.values() for name in n.names for w in stems(name)}
    names |= {w for e in scene.pack.enemies.values() for name in e.names for w in stems(name)}
    mine = stems(said.core) - names
    for choice in scene.pack.story.choices:
        if choice.condition.at_node and choice.condition.at_node != scene.node:
            continue
        theirs = stems(choice.description.split(".")[0]) - names
        if len(mine & theirs) >= 2:
            return choice.id
    return None
