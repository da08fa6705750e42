"""A telling true to the rules: told what the rules will add before it is written, mended after.

Before the narrator is called, :func:`consequences_ahead` works out on a copy what the rules will add by themselves
when the acts asked are carried out (a quest step, a quest started, a level, an ending: issue 42, "talk to the
princess" completed a quest the telling never mentioned); the prompt says them under the action.

After it answers, a sentence that tells the player doing what the rules did not carry out is left out.

Issue 42: after a refused take, a model's "You pluck the clump of silverleaf from the roots." was shown as it came,
the herb stayed on the ground, and "Ren plucked herbs" went into the summary and the synopsis for ten turns. A
telling may describe anything; what it may not do is claim an act of the player's that the rules did not apply.

The check reads a telling the way the game reads the player (:mod:`game.language.reading`, then
:func:`game.world.asked.understand`): each sentence whose subject is the player ("You pluck...", "Carefully, you
pick up...") is read as the player's own line ("I pluck..."), and the acts it asks for are the acts it claims. A
claimed act the turn did not carry out (the item is not in hand, the place is not reached, no blow was struck) makes
the sentence unfounded, and it is left out. A thing named only by words of its description ("the clump of
silverleaf" for the Healing Herb) counts when exactly one thing lying here has that word. Only acts whose result the
state shows are judged; talking, looking and feeling are a telling's own. A clause whose verb reads two ways
("leave": go or put down) claims nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from game.engine.results import rules_account
from game.engine.voice import sentences
from game.language.reading import Clause, read
from game.text import STOPWORDS, keywords
from game.world.asked import Act, Asked, understand
from game.world.conditions import items_at
from game.world.content import ContentPack
from game.world.describe import node_description
from game.world.effects import Effects
from game.world.rules import Outcome, Rules
from game.world.state import GameState

_SUBJECT = re.compile(
    r"^(?P<lead>(?:[A-Z][\w' -]{0,30},\s*)?)you\b(?!'re|'d|'ll| are| were| would| could| might)", re.I
)
"""A sentence whose subject is the player: "You take...", "Carefully, you take..." (not "You are...")."""
JUDGED = frozenset({"go", "take", "drop", "use", "give", "buy", "sell", "attack", "flee", "defend", "rest", "choice"})
"""The acts whose result the state shows; a claim of another (talk) is a telling's own."""
_ONE_WAY = frozenset({"take", "drop", "use", "give", "trade", "fight", "move", "rest"})


@dataclass(frozen=True)
class Unfounded:
    """A sentence of a telling that claims an act the rules did not carry out."""

    sentence: str
    act: Act

    def describe(self, pack: ContentPack) -> str:
        return f"{self.sentence!r} claims {self.act.describe(pack)!r}, which the rules did not carry out"


def player_line(sentence: str) -> str | None:
    """The sentence as the player's own line ("You pluck the herb." -> "I pluck the herb."), or None when its
    subject is not the player."""
    found = _SUBJECT.match(sentence.strip())
    if not found:
        return None
    rest = re.sub(r"\byour\b", "my", sentence.strip()[found.end() :], flags=re.I)
    rest = re.sub(r"\byourself\b", "myself", rest, flags=re.I)
    return f"{found.group('lead')}I{rest}"


def claimed(
    sentence: str, state: GameState, pack: ContentPack, names: frozenset[str], people: frozenset[str]
) -> list[Act]:
    """The acts a sentence of a telling claims for the player, read as the player's line in ``state`` (the state
    the turn began in)."""
    line = player_line(sentence)
    if line is None:
        return []
    reading = read(line, names, people)
    clauses = [c for c in reading.clauses if c.binds]
    if not clauses or any(len(c.classes & _ONE_WAY) > 1 or c.how.startswith("typo") for c in clauses):
        return []  # a verb read two ways, or a word read as a misspelt verb ("you ready" as "read"): no claim
    asked = understand(reading, state, pack)
    acts = list(asked.acts) or ([asked.refused] if asked.refused else [])  # not an offer: a guess of the reader
    if not acts:
        acts = [a for c in clauses if (a := _described(c, state, pack)) is not None]
    return [a for a in acts if a.verb in JUDGED]


def _described(clause: Clause, state: GameState, pack: ContentPack) -> Act | None:
    """A take of the one thing lying here that a word of the clause names by its description ("you pluck the
    clump of silverleaf": the Healing Herb, a bundle of silverleaf and yarrow)."""
    if "take" not in clause.classes:
        return None
    said = set(clause.words) - STOPWORDS
    here = dict.fromkeys(items_at(state, pack, state.node))
    found = {i for i in here if i in pack.items and said & _description_words(pack, i)}
    return Act("take", found.pop(), guessed=True) if len(found) == 1 else None


def _description_words(pack: ContentPack, item_id: str) -> set[str]:
    item = pack.items[item_id]
    return {w for w in keywords(f"{item.name} {item.description}") if len(w) > 3}


def carried_out(act: Act, before: GameState, after: GameState, outcome: Outcome) -> bool:
    """Whether the turn did what ``act`` claims (or it already held: "you take up the knife" you carry)."""
    done = {(a.effect, a.detail) for a in outcome.applied}
    effects = {a.effect for a in outcome.applied}
    verb, target = act.verb, act.target
    if verb == "go":
        return after.node == target
    if verb == "take":
        return after.inventory.count(target) > before.inventory.count(target) or ("items_gained", target) in done
    if verb == "drop":
        return ("items_lost", target) in done or target not in after.inventory
    if verb == "use":  # "you ready your blade": the one in hand already is
        return ("use_item", target) in done or target in (after.equipped_weapon, after.equipped_armor)
    if verb == "give":
        return any(e == "give_item" and d.startswith(f"{target}->") for e, d in done)
    if verb in ("buy", "sell"):
        return any(e == "trade" and d.startswith(verb) and target in d for e, d in done)
    if verb == "attack":
        return bool(effects & {"start_combat", "combat_action", "defeated", "knocked_out"}) or after.combat is not None
    if verb in ("flee", "defend"):
        return "combat_action" in effects
    if verb == "rest":
        return "rest" in effects
    if verb == "choice":
        return ("choice", target) in done or bool(after.ending)
    return True


def unfounded(
    telling: str,
    before: GameState,
    after: GameState,
    outcome: Outcome,
    pack: ContentPack,
    names: frozenset[str],
    people: frozenset[str],
) -> list[Unfounded]:
    """The sentences of ``telling`` that claim an act of the player's the turn did not carry out.

    A sentence that names a thing an act of the turn was carried out on tells that act in its own words,
    however the reader takes them (the relay game, issue 42: "You open the bark-bound tome and read..." of the tome
    used, "You lay the Moonvine Strand beside the branch..." of the strand given)."""
    out = []
    done = _done_words(outcome, pack)
    for sentence in sentences(telling):
        if done & set(keywords(sentence)):
            continue
        for act in claimed(sentence, before, pack, names, people):
            if not carried_out(act, before, after, outcome):
                out.append(Unfounded(sentence, act))
                break
    return out


def _done_words(outcome: Outcome, pack: ContentPack) -> set[str]:
    """The words naming the things the turn's applied acts were carried out on (not the people: a talk carried
    out founds no gift to the one talked to)."""
    ids = {part for a in outcome.applied for part in re.split(r"[^\w]+", a.detail)}
    return {w for w in keywords(" ".join(pack.items[i].name for i in ids if i in pack.items)) if len(w) > 3}


def without(telling: str, found: Iterable[Unfounded]) -> str:
    """``telling`` without the unfounded sentences (the rest as written, one line per paragraph kept)."""
    out = telling
    for claim in found:
        out = out.replace(claim.sentence, "", 1)
    return "\n".join(" ".join(line.split()) for line in out.splitlines() if line.strip())


def true_to_rules(
    telling: str,
    before: GameState,
    after: GameState,
    outcome: Outcome,
    pack: ContentPack,
    names: frozenset[str],
    people: frozenset[str],
) -> tuple[str, list[Unfounded]]:
    """``telling`` without the sentences that claim an act the turn did not carry out ("you pluck the silverleaf"
    after a refused take), the rules' account when nothing is left; and those sentences."""
    found = unfounded(telling, before, after, outcome, pack, names, people)
    if not found:
        return telling, []
    return without(telling, found) or rules_account(outcome, before, after, pack), found


def consequences_ahead(rules: Rules, seen: GameState, asked: Asked) -> list[str]:
    """What the rules will add by themselves when the acts asked are carried out, worked out on a copy of ``seen``
    before the narrator is called, so that it tells them: a quest step, a level, an ending, and what an act's own
    dice and content decide (a blow and the one it draws, what a draught does, the rest's healing). The dice are
    the game's seed and turn, so the round told ahead is the round rolled (the relay game, issue 42: a model told
    the player striking first, then the rules said "The Cliff Harpy strikes before you are ready!")."""
    granted = asked.granted(seen)
    if granted is None:
        return []
    after = seen.snapshot()
    out = rules.resolve_turn(after, Effects(), asked.reading, granted=granted)
    restated = {message for effect, message in out.said if effect in _TOLD_BY_THE_ACT}
    told = [message for message in out.messages if message not in restated]  # the foe's blows are said unpaired
    if after.node != seen.node and not seen.has_flag(f"visited:{after.node}"):  # the relay game: arrivals told blind
        place = rules.pack.nodes[after.node]
        told.insert(0, f"The player arrives at {place.name} for the first time: {node_description(after, rules.pack)}")
    return told


_TOLD_BY_THE_ACT = frozenset({"items_gained", "items_lost", "move_to", "talk_to"})
"""Effects whose message only restates the act asked ("You take the Healing Herb."): the line under the action
says it already."""
