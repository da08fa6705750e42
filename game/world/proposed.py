"""A model's reading offered, not refused: the act a narrator proposed for a line the reader left open (issue 41).

The reader leaves a line to the narrator when it asks for something no rule of its grammar resolves ("kip down
here a while", "wrest the strand loose", a word typed wrong twice over). A capable model reads many such lines
right, and proposes the act; the intent check then refuses it as not asked (no clause of the line grounds it), the
narrator is asked again, and the player reads that nothing happened: a silent refusal of what they asked, by a
model that understood them. So such a proposal is asked back instead ("Do you mean: rest?"), at no turn's cost,
when it is **plausible**:

- the line was left open (the reader did not say it asks nothing: a question, a wish, a negation, a report and
  words said stay refused);
- the act is one of the player's own (go, take, drop, use, give, buy, sell, talk, a fight's move, rest, a story
  choice): money given or spent with no act is never offered;
- the line names the act's object: a word of its name, a way's direction or the place it leads to (a misspelling
  forgiven), or two words of its description; or the line says the act's verb and the object is the only one the
  verb could take here; an act with no object (rest, a fight's move) needs nothing named.

The rules still decide whether the act can be: the engine offers only what they would allow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from game.language.lexicon import DIRECTIONS, FOE_NOUNS, lemma, place_kin, role_kin, senses
from game.language.spelling import candidates
from game.text import STOPWORDS, keywords
from game.world.acts import Act, Scene

_BY_EFFECT = {
    "move_to": "go",
    "items_gained": "take",
    "items_lost": "drop",
    "use_item": "use",
    "talk_to": "talk",
    "start_combat": "attack",
    "choice": "choice",
}
"""The act an effect with one id carries out."""
_OBJECTLESS = frozenset({"rest", "flee", "defend"})


def proposed(rejected: Iterable[tuple[str, Any]]) -> list[Act]:
    """The player's acts in a proposal's effects (``(effect, value)`` pairs refused as not asked), in order."""
    acts: list[Act] = []
    for effect, value in rejected:
        if effect in _BY_EFFECT and isinstance(value, str):
            acts.append(Act(_BY_EFFECT[effect], value, guessed=True))
        elif effect == "give_item" and isinstance(value, dict):
            acts.append(Act("give", str(value.get("item", "")), str(value.get("to", "")), guessed=True))
        elif effect == "trade" and isinstance(value, dict) and value.get("deal") in ("buy", "sell"):
            acts.append(Act(str(value["deal"]), str(value.get("item", "")), str(value.get("npc", "")), guessed=True))
        elif effect == "combat_action" and value in ("attack", "flee", "defend"):
            acts.append(Act(str(value), guessed=True))
        elif effect == "rest" and value:
            acts.append(Act("rest", guessed=True))
    fought = {a.target for a in acts if a.verb == "attack" and a.target}
    return list(dict.fromkeys(a for a in acts if not (a.verb == "attack" and not a.target and fought)))


def plausible(act: Act, text: str, scene: Scene) -> bool:
    """Whether ``text`` (a line the reader left open) could ask for ``act`` (see the module's docstring)."""
    if act.verb in _OBJECTLESS or (act.verb == "attack" and scene.state.combat is not None):
        return True
    said = re.findall(r"[a-z0-9']+", text.lower())
    called, ways, told = _called(act, scene)
    if set(said) & ways:
        return True  # "and up we go": the way up
    words = {w for name in called for w in re.findall(r"[a-z0-9']+", name.lower()) if w not in STOPWORDS}
    words |= {w for w in ways if len(w) >= 3}
    if any(_names(w, words) for w in said):
        return True  # a word of its name, a misspelling forgiven, a word grown from it: "goe est", "easterly"
    if _kind_named(act, said, " ".join([*called, told]).lower(), scene):
        return True  # "sidle past the shutters to the inn": a taproom; "bless me father": the reverend
    if len(set(keywords(text)) & set(keywords(told))) >= 2:
        return True
    verbs = {s for w in said for s in senses(lemma(w))}
    return act.verb in verbs and _only_one(act, scene)


def _kind_named(act: Act, said: list[str], about: str, scene: Scene) -> bool:
    """Whether a word said names the act's object by its kind: a kind of place its name or words describe (the
    inn, a taproom), a kind of person its names or role say (father, a reverend), a foe when one is here."""
    if act.verb == "attack":
        return bool(set(said) & FOE_NOUNS) and len(scene.enemies) == 1
    kin = place_kin if act.verb == "go" else role_kin if act.verb == "talk" else None
    if kin is None:
        return False
    grown = {k for w in said if len(w) >= 3 for k in kin(w)}
    return bool(grown & set(re.findall(r"[a-z']+", about)))


def _names(said: str, words: set[str]) -> bool:
    """Whether a word said is one of ``words``, one misspelt, or one with an ending ("easterly", "lodgewards")."""
    if said in words or any(len(w) >= 4 and said.startswith(w) for w in words):
        return True
    return said not in STOPWORDS and bool(candidates(said, words, short=len(said) <= 4))


def _called(act: Act, scene: Scene) -> tuple[list[str], set[str], str]:
    """The names the act's object (and the person it involves) goes by, the direction words of a way there, and
    the words describing it."""
    pack = scene.pack
    if act.verb == "go" and act.target in pack.nodes:
        ways = [d for d, to in scene.exits.items() if to == act.target]
        spoken = [w for w, d in DIRECTIONS.items() if d in ways]
        return [pack.nodes[act.target].name], set(spoken), pack.nodes[act.target].description
    if act.verb == "choice":
        choice = pack.choice(act.target)
        return ([choice.name], set(), choice.description) if choice else ([], set(), "")
    called: list[str] = []
    told = ""
    if act.target in pack.items:
        called, told = list(pack.items[act.target].names), pack.items[act.target].description
    elif act.target in pack.npcs:
        called, told = list(pack.npcs[act.target].names), pack.npcs[act.target].role
    elif act.target in pack.enemies:
        called = list(pack.enemies[act.target].names)
    person = pack.npcs.get(act.to)
    return [*called, *(person.names if person is not None else [])], set(), told


def _only_one(act: Act, scene: Scene) -> bool:
    """Whether ``act``'s object is the only thing here its verb could take (the one item lying here to take...)."""
    pool = {
        "take": scene.lying,
        "drop": scene.carried,
        "use": scene.carried,
        "give": scene.carried,
        "sell": scene.carried,
        "talk": scene.people,
        "attack": scene.enemies,
        "go": tuple(dict.fromkeys(scene.exits.values())),
    }.get(act.verb, ())
    return len(set(pool)) == 1 and act.target in pool
