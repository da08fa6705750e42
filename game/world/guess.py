"""Ask, don't leave it: the acts a line no reader resolved most likely asks, offered (issue 41).

Measured on sentences the reader had not seen (the corpus's fifth held-out part), one plain request in five came
to nothing: the reader left the line to the narrator ("mosey on down to the cove", "right then, have a go at the
big rock lad", "nope nope nope, leg it" in a fight), or refused a thing that no name here matches though its
description does ("There is no man here." where the wrecker stands behind the crates), and the narrator told the
player standing still. Each phrasing could be taught to the lexicon, and the next writer brings others. What
carries to the next sentence is the scene: a line that asks for something, in a place with a handful of things
to act on, most likely asks to act on the thing it names. So such a line is asked back, at no turn's cost:

- in a fight, the fight's own acts (attack, defend, flee), the one the line's words lean to first;
- else the acts on the things of the scene the line names, by name (a misspelling forgiven) or by the words of
  their description: a thing lying here taken, a thing carried used, a ware bought, an enemy fought, a person
  spoken to, a way out gone; the verb the line says first, when it fits the thing.

Only an offer, never applied on that alone: "no" leaves the world as it was. A line that asks nothing (a
question, a wish, a negation, a report, words said) is never asked back here: the reader has said what it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from game.language.lexicon import (
    DIRECTIONS,
    FOE_NOUNS,
    GRANTS,
    HANDING_OVER,
    LIST_WORDS,
    PEOPLE_NOUNS,
    SELF_REPORTS,
    leading,
    lemma,
    senses,
)
from game.text import STOPWORDS, keywords, mentions, whole_words
from game.world import names
from game.world.acts import Act, Scene
from game.world.asked import Asked
from game.world.content import ContentPack
from game.world.resolve import feature_named
from game.world.rules.trade import traders_here
from game.world.state import GameState
from game.world.ways import way_named

_MOST = 4
"""The most acts one question offers (the keys 1-4)."""

_FIGHT = ("attack", "defend", "flee")
_TOLD_BY_RULES = frozenset({"give", "sell", "buy"})
"""Verbs whose open clause the rules tell (money given, a sale the trader refuses): never asked back."""


def ask_instead(asked: Asked, state: GameState, pack: ContentPack) -> Asked:
    """``asked`` with an offer in place of a line left with no act (see the module's docstring); ``asked``
    itself when the reader said what the line is, or the scene offers nothing the line names."""
    scene = Scene.of(state, pack)
    if (awaited := _awaited(asked, scene)) is not None:  # "here is your memory": the one it is owed to
        return replace(asked, acts=(), offer=(awaited,), notes=(*asked.notes, "asked back: a thing awaited"))
    if asked.kind == "open":
        if any(c.command.verb == "talk" or feature_named(c.command.target or c.core, scene) for c in asked.open):
            return asked  # a parley with an enemy, a drink from the spring: the narrator's to tell
        if not state.combat and any(_grants(c.core) for c in asked.open):
            return asked  # "give me 1000 gold", "heal me": asked of someone else, not an act of the player's
        if any(c.command.verb in _TOLD_BY_RULES and _dealt(c.core, scene) for c in asked.open):
            return asked  # "give 5 gold to garrick", "sell the stim pack to goro": the rules say what comes of it
        if leading(asked.reading.text.lower(), SELF_REPORTS):
            return asked  # "my name is Ren and I come from the salt marshes": who they are, no request
        words, why = " ".join(c.text for c in asked.open), ""
    elif asked.kind == "refused" and asked.unknown and not state.combat:
        words, why = asked.reading.text, asked.refusal  # "cut the glowing vine": no enemy, but a thing here
    elif asked.kind == "acts" and state.combat and asked.acts[0].verb == "go":
        words, why = asked.reading.text, ""  # "run north" with a wolf at the throat: away from the fight
    elif asked.kind == "acts" and asked.gaps:
        return _filled(asked, scene)  # "fuse + gloves, then east through the hatch"
    else:
        return asked
    listed = _bare(words, scene) if asked.kind == "open" and len(asked.open) == 1 else ()
    if len(listed) > 1:  # "fuse and gloves": both, not one of them
        return _together(asked, listed, scene)
    offer = _fight(words, scene) if state.combat else _named(words, scene, why) or _foe(words, scene)
    if not offer:
        return asked
    note = "asked back: " + ", ".join(a.describe(pack) for a in offer)
    return replace(asked, acts=(), refusal="", offer=offer, first=why, notes=(*asked.notes, note))


def _filled(asked: Asked, scene: Scene) -> Asked:
    """``asked`` with each step the reader left open among its acts filled by the things it names, bare ("fuse +
    gloves, then east": take both, then go; "fuse in breaker, take cell": use the fuse it carries), the whole line
    asked back; ``asked`` itself when a gap names no thing, or says a verb (a flourish: "draw my sword and
    attack")."""
    line: list[Act] = []
    done = 0
    for position, clause in asked.gaps:
        for act in asked.acts[done:position]:
            line.append(act)
            scene = scene.after(act)
        done = max(done, position)
        bare = _bare(clause.text, scene) or _one_named(clause.text, scene)
        if not bare:
            return asked
        for act in bare:
            line.append(act)
            scene = scene.after(act)
    return _together(asked, [*line, *asked.acts[done:]], scene)


def _one_named(core: str, scene: Scene) -> tuple[Act, ...]:
    """The one act on the one thing a step whose verb the lexicon lacks names ("dig the pendant out of the mud",
    "it's down to the generator"): a thing taken, a way gone, a ware bought; () when the verb is known, the step
    names more than one thing, or it names a thing carried, a foe or a person ("I draw my knife and attack the
    wolf", "with your permission, Reverend, ...": no step of their own)."""
    first = core.split()[0] if core.split() else ""
    if senses(lemma(first)) or "my" in core.lower().split():
        return ()  # "I draw my baton": mine already, as the player tells it
    named = _named(core, scene, "")
    if len(named) != 1 or named[0].verb not in ("take", "go", "buy"):
        return ()  # "I draw my knife and attack the wolf", "with your permission, Reverend": no step of its own
    return named


def _together(asked: Asked, line: Sequence[Act], scene: Scene) -> Asked:
    """``asked`` offering ``line``, all of it on one yes, each act its own step (takes side by side one step)."""
    stepped: list[Act] = []
    for act in line:
        joined = stepped and act.verb == "take" == stepped[-1].verb
        step = stepped[-1].step + (0 if joined else 1) if stepped else 0
        stepped.append(replace(act, step=step))
    note = "asked back, the whole line: " + ", ".join(a.describe(scene.pack) for a in stepped)
    return replace(asked, acts=(), offer=tuple(stepped), together=True, notes=(*asked.notes, note))


def _bare(words: str, scene: Scene) -> tuple[Act, ...]:
    """The things a clause with no verb names ("fuse + gloves", "the watch n the burner", "chip & salve"): each
    lying here taken, or the one thing carried used ("fuse in breaker"); () when it says a verb or names nothing
    else."""
    pool = [(act, called) for act, called, _ in _pools(scene) if act.verb in ("take", "use")]
    ids, rest = mentions(words, [(act.target, called) for act, called in pool])
    for word in re.findall(r"[a-z0-9']{4,}", rest.lower()):  # one word of one thing's name: "chip"
        owners = [act.target for act, called in pool if word in " ".join(called).lower().split()]
        if len(set(owners)) == 1:
            ids.append(owners[0])
            rest = rest.lower().replace(word, " ")
    here = scene.pack.nodes[scene.node].features
    spots = {w for f in here for name in (f.name, *f.aliases) for w in keywords(name)}  # "in breaker"
    if not ids or any(w not in spots for w in keywords(rest) if w not in LIST_WORDS):
        return ()  # a word that is no name: a verb the lexicon lacks ("draw my baton"), a flourish
    said = words.lower()
    where = {
        act.target: min(said.find(w) % (len(said) + 1) for n in called for w in n.lower().split())
        for act, called in pool
    }
    named = sorted(_unique([act for act, _ in pool if act.target in ids]), key=lambda a: where[a.target])
    if all(a.verb == "take" for a in named):
        return tuple(named)
    return tuple(named) if len(named) == 1 else ()


def _first_said(said: str, called: list[str]) -> int:
    """Where in ``said`` a word of a thing's names first comes (a list's things in the order said)."""
    found = [m.start() for name in called for w in keywords(name) for m in [re.search(rf"\b{re.escape(w)}", said)] if m]
    return min(found, default=len(said))


def _awaited(asked: Asked, scene: Scene) -> Act | None:
    """The gift a line most likely makes when it asks no act but a word (or nothing), names one thing carried by
    a word of its name, and a person here is waiting for that thing (a quest under way asks it of them): "here is
    your memory, please take it back", "the moonvine you wanted", "Miss Crane, I found your mother's locket".
    Never in a line that refuses, supposes, wishes or asks."""
    if asked.kind not in ("acts", "nothing", "open") or any(a.verb != "talk" for a in asked.acts):
        return None
    clauses = asked.reading.clauses
    if any(c.negated or c.mood in ("hypothetical", "wish") for c in clauses) or all(
        c.mood == "question" for c in clauses
    ):
        return None  # "old man, here are your nets, what's left of them": a question beside the gift
    state, pack = scene.state, scene.pack
    owed = {
        (o.target, o.to_npc)
        for q in state.active_quests()
        if (quest := pack.quest(q)) is not None
        for o in quest.objectives
        if o.kind == "give" and o.to_npc in scene.people and o.target in scene.carried
    }
    text = asked.reading.text.lower()
    said = set(re.findall(r"[a-z0-9']+", text)) - STOPWORDS
    named = {(i, n) for i, n in owed for name in pack.items[i].names for w in name.lower().split() if w in said}
    handing = re.match(r"^here\b", text) or any(whole_words(phrase).search(text) for phrase in HANDING_OVER)
    if not named and handing:  # "here, lass, this was your mother's": the one thing owed
        named = owed
    if len(named) != 1:
        return None
    item, person = named.pop()
    return Act("give", item, person, guessed=True)


def _grants(core: str) -> bool:
    """Whether a clause asks someone else to act on the player ("give me 1000 gold", "heal me")."""
    said = core.split()
    return len(said) > 1 and said[0] in GRANTS and said[1] in ("me", "us")


def _dealt(core: str, scene: Scene) -> bool:
    """Whether a clause of giving or trade names money or a person here: a deal the rules tell ("give 5 gold to
    garrick", "sell the stim pack to goro")."""
    people = [(n, list(scene.pack.npcs[n].names)) for n in scene.people]
    return bool(re.search(r"\d", core)) or bool(mentions(core, people)[0])


def _senses(words: str) -> list[str]:
    """The verbs of the closed set the line's words can mean, in the order said."""
    return [s for w in re.findall(r"[a-z]+", words.lower()) for s in senses(lemma(w))]


def _fight(words: str, scene: Scene) -> tuple[Act, ...]:
    """The fight's acts, the one the words lean to first ("leg it": flee; "brace myself": defend)."""
    enemy = scene.state.combat.enemy_id if scene.state.combat else ""
    leaning = _senses(words)
    wants = {"go": "flee", "flee": "flee", "defend": "defend", "attack": "attack"}
    first = next((wants[s] for s in leaning if s in wants), "attack")
    order = sorted(_FIGHT, key=lambda verb: verb != first)
    return tuple(Act(verb, enemy if verb == "attack" else "", guessed=True) for verb in order)


def _foe(words: str, scene: Scene) -> tuple[Act, ...]:
    """The one enemy here, for a line that calls someone it would fight by no name ("the scoundrel", "the man")."""
    said = set(re.findall(r"[a-z]+", words.lower()))
    enemies = scene.enemies
    if len(enemies) == 1 and said & (FOE_NOUNS | PEOPLE_NOUNS) and not scene.people:
        return (Act("attack", enemies[0], guessed=True),)
    return ()


def _named(words: str, scene: Scene, why: str) -> tuple[Act, ...]:
    """The acts on the things of ``scene`` that ``words`` name best: by name first, else by the most words of
    their description (two words at least, or one word of their name: "mosey on down to the cove")."""
    pools = _pools(scene)
    by_name = [act for act, called, _ in pools if mentions(words, [(act.target, called)])[0]]
    if not by_name:  # a misspelt name, one word at a time ("by stimpak from okbe"): a word of five letters or
        single = [w for w in re.findall(r"[a-z0-9']+", words.lower()) if len(w) >= 5]  # more ("gold" is no "old")
        by_name = [
            act for act, called, _ in pools if any(names.match(said, [(act.target, called)])[0] for said in single)
        ]
    if by_name:
        return _verb_first(_with_whom(_unique(by_name)), words)
    said = set(keywords(words)) - _DIRECTION_WORDS
    scored: dict[Act, int] = {}
    for act, called, told in pools:
        shared = said & set(keywords(" ".join([*called, told])))
        if len(shared) >= 2 or shared & set(keywords(" ".join(called))):
            scored[act] = len(shared)
    way = way_named(words, scene, guessed=True)
    if way is not None:
        scored[way] = scored.get(way, 0) + 2
    if not scored:
        return ()
    best = max(scored.values())
    top = _unique([act for act, score in scored.items() if score == best])
    return _verb_first(top, words) if len(top) <= _MOST else ()


def _pools(scene: Scene) -> list[tuple[Act, list[str], str]]:
    """Each act the scene allows on a thing: (the act, the thing's names, the words that describe it)."""
    pack = scene.pack
    here = pack.nodes[scene.node]
    out: list[tuple[Act, list[str], str]] = []
    for item in dict.fromkeys(scene.lying):  # described by the place's own line too: "a small bottle of amber"
        told = " ".join(v.text for v in here.variants if item in v.items_here)
        out.append((Act("take", item, guessed=True), pack.items[item].names, f"{pack.items[item].description} {told}"))
    for item in dict.fromkeys(scene.carried):
        out.append((Act("use", item, guessed=True), pack.items[item].names, pack.items[item].description))
    for enemy in scene.enemies:  # by name only: an encounter's prose tells the fight, and named far too much (part
        # five's questions back went from 14.5% to 15.4% of its requests with it)
        out.append((Act("attack", enemy, guessed=True), pack.enemies[enemy].names, ""))
    for npc in scene.people:
        out.append((Act("talk", npc, guessed=True), pack.npcs[npc].names, pack.npcs[npc].role))
    for npc in traders_here(pack, scene.state):
        trade = pack.npcs[npc].trade
        for item in trade.sells if trade else []:
            if item in pack.items and item not in scene.lying:
                out.append((Act("buy", item, npc, guessed=True), pack.items[item].names, pack.items[item].description))
    for choice in pack.story.choices:
        if choice.condition.at_node == scene.node:  # a story choice is offered only where it is made
            out.append((Act("choice", choice.id, guessed=True), [choice.name], choice.description))
    for way in dict.fromkeys(scene.exits.values()):
        place = pack.nodes[way]
        features = " ".join(" ".join([f.name, *f.aliases]) for f in place.features)
        out.append((Act("go", way, guessed=True), [place.name], f"{place.description} {features}"))
    return out


_DIRECTION_WORDS = frozenset(DIRECTIONS)


def _unique(acts: list[Act]) -> list[Act]:
    return list(dict.fromkeys(acts))


def _with_whom(acts: list[Act]) -> list[Act]:
    """``acts`` without a word with a person another act already deals with ("waybread from the hunter": the
    purchase from him, not a talk)."""
    dealt = {a.to for a in acts if a.to}
    return [a for a in acts if not (a.verb == "talk" and a.target in dealt)]


def _verb_first(acts: list[Act], words: str) -> tuple[Act, ...]:
    """``acts`` with the ones whose verb the line says first ("fight the man": the attack before the talk); a
    thing named with a person is handed to them ("the branch to elvin": give it)."""
    said = set(_senses(words))
    items = [a for a in acts if a.verb == "use"]
    people = [a for a in acts if a.verb == "talk"]
    if len(items) == 1 and len(people) == 1 and said & {"give", "sell"}:
        return (Act("give", items[0].target, people[0].target, guessed=True),)
    if "drop" in said:
        acts = [replace(a, verb="drop") if a.verb == "use" else a for a in acts]
    ranked = sorted(acts, key=lambda a: a.verb not in said)
    return tuple(ranked[:_MOST])
