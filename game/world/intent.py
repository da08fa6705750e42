"""Who wants it: whether this turn's action asks for what an effect does for the player.

The rules check what is possible; a narrator that writes a little ahead of the player ("You stroll north and
toss your knife into the ferns" when the player typed ``look``) proposes effects that are possible and were never
asked for. An effect that acts *for* the player (``ACTS``: moving, taking, dropping, giving, using, talking,
starting a fight, a combat move, resting, a story choice) must be grounded in this turn's action:

- a mention of its target: the exit's direction or the place's name ("head back to the lodge"), the item, the
  person, the enemy (or the person it is: the Shadow Lord is Silas), a story choice's own words;
- or the action's kind where it has no object: a fight move ("attack", "flee", "block"), rest ("rest",
  "sleep"), words to the people present ("hello", a question, "tell her ...");
- or a step of a quest objective still to do, said in the player's words ("speak the verse" is the dewdrop's
  use that "Pour the dewdrop ... and speak the verse" asks for).

What the world does *to* the player (an enemy's blow, a reward, affinity, experience, a side quest a talk
starts) stays the rules' own, and claims (quest updates, an ending) are checked by the rules as before. An effect
that is not grounded is refused with :data:`NOT_ASKED`; the narrator is asked again as for any refusal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from game.text import best_match, keywords, whole_words
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.parser import DIRECTIONS, PRONOUNS, Command, clauses, parse, verb_key
from game.world.state import GameState
from game.world.verbs import SENSING

NOT_ASKED = "not what you asked"
"""The reason an act for the player is refused when the action does not ask for it."""
ACTS = (
    "talk_to",
    "move_to",
    "items_gained",
    "items_lost",
    "use_item",
    "give_item",
    "start_combat",
    "combat_action",
    "rest",
    "choice",
)
"""Effects that act for the player (the others are what the world does, or claims the rules check)."""

_ATTACK = re.compile(
    r"\b(?:attack|fight|hit|strike|kill|slay|stab|slash|smash|punch|kick|shoot|swing|charge|lunge|cut|hack|bash"
    r"|press\s+the\s+attack|go\s+for|take\s+down|finish)\b"
)
_FLEE = re.compile(r"\b(?:flee|run|escape|retreat|get\s+away|back\s+away|bolt|withdraw|leave|go|disengage)\b")
_DEFEND = re.compile(r"\b(?:defend|block|parry|guard|dodge|brace|shield|duck|evade|cover|use|drink|eat|apply)\b")
_REST = re.compile(r"\b(?:rest|sleep|nap|doze|camp|lie\s+down|recover|catch\s+(?:my|your)\s+breath|take\s+a\s+break)\b")
_SPEAK = re.compile(
    r"\?|\b(?:hello|hi|hey|greetings|talk|speak|chat|ask|tell|say|answer|reply|greet|thank|call|shout|whisper)\b"
)
_HEAL = re.compile(r"\b(?:heal|cure|patch\s+(?:me|myself)\s+up|bandage|treat\s+(?:my|me)|tend\s+to)\b")
_ALL = re.compile(r"\b(?:all|everything|every\s+thing|it\s+all)\b")
_VERTICAL = re.compile(r"\b(?:climb|ascend|descend|upstairs|downstairs|elevator|lift|stairs?|ladder|ramp|shaft)\b")
_MOVE = re.compile(
    r"\b(?:go|walk|head|visit|find|return|run|travel|enter|climb|follow|seek|make\s+for|set\s+off|hurry|march)\b"
)
_LEAVE = re.compile(r"\b(?:leave|exit|out|outside|back)\b")


@dataclass(frozen=True)
class Intent:
    """What one turn's action says: its text, its keywords and the command the parser read."""

    text: str
    words: frozenset[str]
    command: Command

    @classmethod
    def of(cls, action: str) -> Intent:
        text = " ".join(action.lower().split())
        return cls(text, frozenset(keywords(text)), parse(action))

    def names(self, names: Iterable[str], claimed: frozenset[str] = frozenset()) -> bool:
        """Whether the action names something by one of ``names`` (the content's names and short aliases: "herb"
        for the Healing Herb): every word of one of them is a word of the action, not all of them ``claimed``
        (words of another thing's full name)."""
        for name in names:
            wanted = _name_words(name)
            if wanted and wanted <= self.words and not wanted <= claimed:
                return True
        return False

    def pronoun(self) -> bool:
        """Whether the action points at someone or something without naming it ("take it", "give her this")."""
        return bool(set(self.text.replace("'", " ").split()) & (PRONOUNS | {"this", "that", "these", "those"}))


@cache
def _name_words(name: str) -> frozenset[str]:
    """The keywords of a content name (names repeat every turn: worked out once)."""
    return frozenset(keywords(name.replace("_", " ")))


def _place_words(pack: ContentPack, here: str, node_id: str) -> frozenset[str]:
    """The words of a place's name that tell it from the other places a player could walk to from ``here`` ("gate"
    of the Moonwatch Gate from the Fogbound Path, not "old" of Old Hunter's Lodge)."""
    around = {here, *pack.nodes[here].exits.values()}
    counts: dict[str, int] = {}
    for other in around:
        for word in set(keywords(pack.nodes[other].name)):
            counts[word] = counts.get(word, 0) + 1
    return frozenset(
        w for w in keywords(pack.nodes[node_id].name) if counts.get(w, 0) == 1 and w not in _COMMON and len(w) > 2
    )


_COMMON = frozenset({"old", "young", "great", "small", "big", "little", "new", "dark", "high", "low", "long"})


def refused(intent: Intent, effects: Effects, state: GameState, pack: ContentPack) -> list[tuple[str, object]]:
    """The acts for the player in ``effects`` that ``intent`` does not ask for, as (effect, value) pairs.

    ``state`` is the state before the turn (where the player is, what they carry, whom they fight).
    """
    steps = _objective_targets(intent, state, pack)
    if intent.command.verb in SENSING:  # looking at a thing is not taking, using, fighting or going to it
        intent = Intent(intent.text, frozenset(), intent.command)
    out: list[tuple[str, object]] = []
    if effects.talk_to and not _talks_to(intent, effects.talk_to, state, pack, steps):
        out.append(("talk_to", effects.talk_to))
    if effects.move_to and not _moves_to(intent, effects.move_to, state, pack, steps):
        out.append(("move_to", effects.move_to))
    for item in effects.items_gained:
        if not _item(intent, item, pack, steps, everything=items_at(state, pack, state.node)):
            out.append(("items_gained", item))
    for item in effects.items_lost:
        if not _item(intent, item, pack, steps, everything=state.inventory):
            out.append(("items_lost", item))
    if effects.use_item and not _uses(intent, effects.use_item, state, pack, steps):
        out.append(("use_item", effects.use_item))
    if effects.give_item:
        give = effects.give_item
        asked = _item(intent, give.item, pack, steps, everything=[]) or (
            intent.command.verb == "give" and give.to in pack.npcs and intent.names(pack.npcs[give.to].names)
        )
        if not asked:
            out.append(("give_item", give.model_dump()))
    if effects.start_combat and not _fights(intent, effects.start_combat, state, pack, steps):
        out.append(("start_combat", effects.start_combat))
    if effects.combat_action and not _combat_move(intent, effects.combat_action):
        out.append(("combat_action", effects.combat_action))
    if effects.rest and not (intent.command.verb == "rest" or _REST.search(intent.text)):
        out.append(("rest", True))
    if effects.choice and not _chooses(intent, effects.choice, pack):
        out.append(("choice", effects.choice))
    return out


def _talks_to(intent: Intent, npc_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    npc = pack.npcs.get(npc_id)
    if npc is None:
        return True  # the rules refuse it as no such character
    if npc_id in steps or _names_person(intent, npc.names, pack):
        return True
    here = npc_id in npcs_at(pack, state.node)
    spoken = intent.command.verb in ("talk", "ask", "say", "give") or _SPEAK.search(intent.text) is not None
    return here and (spoken or intent.pronoun())


def _names_person(intent: Intent, names: Iterable[str], pack: ContentPack) -> bool:
    """Whether the action names a person by one of ``names``, not counting the words of the full name of an
    item, enemy or place it names: "think about Hunter's Letter" does not name Old Garrick ("hunter")."""
    claimed: set[str] = set()
    for things in (pack.items, pack.enemies, pack.nodes):
        for thing in things.values():
            words = _name_words(thing.name)
            if len(words) > 1 and words <= intent.words:
                claimed |= words
    return intent.names(names, frozenset(claimed))


def _moves_to(intent: Intent, node_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    node = pack.nodes.get(node_id)
    here = pack.nodes.get(state.node)
    if node is None or here is None:
        return True  # the rules refuse it as no such place
    going = intent.command.verb == "go" or _MOVE.search(intent.text) is not None
    if node_id in steps or intent.names([node.name]):
        return True
    if going and intent.words & _place_words(pack, state.node, node_id):
        return True  # "head for the gate": a word of its name, with a word of going
    ways = [d for d, target in here.exits.items() if target == node_id]
    said = set(re.findall(r"[a-z]+(?:['’][a-z]+)*", intent.text))  # "hunter's" is one word, not "hunter" + "s"
    if any(d in said or d in (DIRECTIONS.get(w) for w in said) for d in ways):
        return True
    if intent.command.verb == "go" and DIRECTIONS.get(intent.command.target) in ways:
        return True
    if any(d in ("up", "down") for d in ways) and _VERTICAL.search(intent.text):
        return True
    people = [n for n in pack.npcs.values() if n.location == node_id]
    if going and any(intent.names(p.names) for p in people):
        return True  # "go find Hal": to where Hal is
    # "leave", "head back out": the one way out
    return len(set(here.exits.values())) == 1 and (going or _LEAVE.search(intent.text) is not None)


def _item(intent: Intent, item_id: str, pack: ContentPack, steps: set[str], everything: Iterable[str]) -> bool:
    item = pack.items.get(item_id)
    if item is None:
        return True  # the rules refuse it as no such item
    if item_id in steps or intent.names([*item.names, item_id]):
        return True
    pool = list(everything)
    if item_id in pool and _ALL.search(intent.text):
        return True  # "take everything"
    return len(set(pool)) == 1 and item_id in pool and intent.pronoun()


def _uses(intent: Intent, item_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    item = pack.items.get(item_id)
    if item is None:
        return True
    if _item(intent, item_id, pack, steps, everything=state.inventory):
        return True
    return bool(item.use and item.use.heal) and _HEAL.search(intent.text) is not None  # "heal me"


def _fights(intent: Intent, enemy_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    enemy = pack.enemies.get(enemy_id)
    if enemy is None:
        return True
    if enemy_id in steps:
        return True
    if not (intent.command.verb == "attack" or _ATTACK.search(intent.text) is not None):
        return False  # naming an enemy is not attacking it ("look at the wolf")
    aliases = {name.lower() for name in enemy.names}
    kin = [n for n in pack.npcs.values() if aliases & {name.lower() for name in n.names}]
    named = intent.names([*enemy.names, enemy_id]) or any(intent.names(n.names) for n in kin)  # Silas: the Lord
    return named or enemy_id in enemies_at(state, pack, state.node)


def _combat_move(intent: Intent, move: str) -> bool:
    verb = intent.command.verb
    if move == "attack":
        return verb == "attack" or _ATTACK.search(intent.text) is not None
    if move == "flee":
        return verb in ("flee", "go") or _FLEE.search(intent.text) is not None
    return verb in ("use", "defend") or _DEFEND.search(intent.text) is not None


def _chooses(intent: Intent, choice_id: str, pack: ContentPack) -> bool:
    choice = pack.choice(choice_id)
    if choice is None:
        return True  # the rules refuse it as no such choice
    return any(whole_words(k.lower()).search(intent.text) for k in choice.keywords)


def _objective_targets(intent: Intent, state: GameState, pack: ContentPack) -> set[str]:
    """What the steps of the objectives still to do name, when the action says one of them in its own words.

    The action's verb must mean the step's verb (``parser.verb_key``) and another of its words must be the
    step's; then the objective's target (and the person or place it involves) is asked for.
    """
    words = re.findall(r"[a-z0-9'-]+", intent.text)
    if len(words) < 2:
        return set()
    verb, said = verb_key(words[0]), set(keywords(" ".join(words[1:])))
    found: set[str] = set()
    for quest in pack.all_quests():
        progress = state.quests.get(quest.id)
        if progress is not None and progress.status != "active":
            continue
        for objective in quest.objectives:
            if progress is not None and objective.id in progress.objectives_done:
                continue
            for step in clauses(objective.description):
                first, _, rest = step.partition(" ")
                if verb_key(first) == verb and said & set(keywords(rest)):
                    found |= {objective.target, *(x for x in (objective.to_npc, objective.at_node) if x)}
    return found


def nothing_to_fight(command: Command, state: GameState, pack: ContentPack) -> str | None:
    """Why a fight move has nothing to act on (no fight and no enemy here, and it names no one here), or None.

    Such a line is answered without a turn, as a typo would be: "attack" in an empty glade costs the player
    nothing (issue 25).
    """
    if command.verb not in ("attack", "flee", "defend") or state.combat or enemies_at(state, pack, state.node):
        return None
    named = f"{command.target} {command.obj}".strip()
    if named and any(best_match(named, [(n, pack.npcs[n].names)]) for n in npcs_at(pack, state.node)):
        return None  # raising a hand against someone here: the narrator's to tell
    return {
        "attack": "There is nothing here to fight.",
        "flee": "There is nothing here to flee from.",
        "defend": "Nothing here threatens you.",
    }[command.verb]
