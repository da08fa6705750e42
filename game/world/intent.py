"""Who wants it: whether this turn's action asks for what an effect does for the player.

The rules check what is possible; a narrator that writes a little ahead of the player ("You stroll north and
toss your knife into the ferns" when the player typed ``look``) proposes effects that are possible and were never
asked for. An effect that acts *for* the player (``ACTS``: moving, taking, dropping, giving, using, talking,
starting a fight, a combat move, resting, a story choice, money leaving the purse) must be grounded in a clause
of this turn's action that *binds* (:mod:`game.language.reading`: a positive clause in the command mood, so not "I
will never kneel", "what lies north?", "I would never drop it" or "he told me to go west"), of the act's class
("look north" is sensing: it grounds no move, take or drop), naming the act's object:

- the exit's direction or the place's name ("head back to the lodge"), the item, the person, the enemy (or the
  person it is: the Shadow Lord is Silas), a story choice's own words, the item given (naming only whom it is
  given to does not say which item);
- or the action's kind where it has no object: a fight move ("attack", "flee", "block"), rest ("rest",
  "sleep"), words to the people present ("hello", a question, "tell her ..."), buying or paying;
- or a step of a quest objective still to do, said in the player's words ("speak the verse" is the dewdrop's
  use that "Pour the dewdrop ... and speak the verse" asks for).

What the world does *to* the player (an enemy's blow, a reward, affinity, experience, a side quest a talk
starts) stays the rules' own, and claims (quest updates, an ending) are checked by the rules as before. An effect
that is not grounded is refused with :data:`NOT_ASKED`; the narrator is asked again as for any refusal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from game.language.lexicon import PEOPLE_NOUNS
from game.language.parser import DIRECTIONS, Command, clauses, verb_key
from game.language.reading import Clause, Reading, name_words
from game.text import best_match, keywords, whole_words
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.state import GameState

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
    "gold_delta",
    "give_gold",
    "trade",
)
"""Effects that act for the player (the others are what the world does, or claims the rules check); a
``gold_delta`` acts for the player when it spends."""

_ATTACK = re.compile(
    r"\b(?:attack|fight|hit|strike|kill|slay|stab|slash|smash|punch|kick|shoot|swing|charge|lunge|cut|hack|bash"
    r"|press\s+the\s+attack|go\s+for|take\s+down|finish)\b"
)
_FLEE = re.compile(r"\b(?:flee|run|escape|retreat|get\s+away|back\s+away|bolt|withdraw|leave|go|disengage)\b")
_DEFEND = re.compile(r"\b(?:defend|block|parry|guard|dodge|brace|shield|duck|evade|cover|use|drink|eat|apply)\b")
_HEAL = re.compile(r"\b(?:heal|cure|patch\s+(?:me|myself)\s+up|bandage|treat\s+(?:my|me)|tend\s+to)\b")
_ALL = re.compile(r"\b(?:all|everything|every\s+thing|it\s+all)\b")
_VERTICAL = re.compile(r"\b(?:climb|ascend|descend|upstairs|downstairs|elevator|lift|stairs?|ladder|ramp|shaft)\b")


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


def refused(reading: Reading, effects: Effects, state: GameState, pack: ContentPack) -> list[tuple[str, object]]:
    """The acts for the player in ``effects`` that ``reading`` does not ask for, as (effect, value) pairs.

    ``state`` is the state before the turn (where the player is, what they carry, whom they fight).
    """
    steps = _objective_targets(reading, state, pack)
    out: list[tuple[str, object]] = []
    if effects.talk_to and not _talks_to(reading, effects.talk_to, state, pack, steps):
        out.append(("talk_to", effects.talk_to))
    if effects.move_to and not _moves_to(reading, effects.move_to, state, pack, steps):
        out.append(("move_to", effects.move_to))
    here = items_at(state, pack, state.node)
    for item in effects.items_gained:
        if not any(_item(c, item, pack, steps, here) for c in reading.binding("take")):
            out.append(("items_gained", item))
    for item in effects.items_lost:
        if not any(_item(c, item, pack, steps, _pool(c, state)) for c in reading.binding("drop", "give", "use")):
            out.append(("items_lost", item))
    if effects.use_item and not _uses(reading, effects.use_item, state, pack, steps):
        out.append(("use_item", effects.use_item))
    if effects.give_item and not any(
        _item(c, effects.give_item.item, pack, steps, [*state.inventory][:1] if len(state.inventory) == 1 else [])
        for c in reading.binding("give", "trade")
    ):
        out.append(("give_item", effects.give_item.model_dump()))
    if effects.start_combat and not _fights(reading, effects.start_combat, state, pack, steps):
        out.append(("start_combat", effects.start_combat))
    if effects.combat_action and not _combat_move(reading, effects.combat_action):
        out.append(("combat_action", effects.combat_action))
    if effects.rest and not reading.binding("rest"):
        out.append(("rest", True))
    if effects.choice and not _chooses(reading, effects.choice, pack):
        out.append(("choice", effects.choice))
    if effects.gold_delta < 0 and not reading.binding("trade"):
        out.append(("gold_delta", effects.gold_delta))  # money leaves the purse only when the player pays
    if effects.give_gold and not reading.binding("give", "trade"):
        out.append(("give_gold", effects.give_gold.model_dump()))
    if effects.trade and not reading.binding("trade"):
        out.append(("trade", effects.trade.model_dump()))  # a deal is struck only when the player buys or sells
    return out


def _pool(clause: Clause, state: GameState) -> list[str]:
    """What "everything" in a clause that loses things stands for: what the player carries, for a drop."""
    return list(state.inventory) if "drop" in clause.classes else []


def _talks_to(reading: Reading, npc_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    npc = pack.npcs.get(npc_id)
    if npc is None:  # the rules refuse it as no such character when the player spoke; else it is not theirs
        return any(c.speaks or "talk" in c.classes for c in reading.clauses)
    if npc_id in steps:
        return True
    acting = [c for c in reading.clauses if c.speaks or (c.binds and "sense" not in c.classes)]
    if any(_names_person(c, npc.names, pack) for c in acting):
        return True
    here = npc_id in npcs_at(pack, state.node)
    return here and any((c.speaks or c.pronoun()) and not _someone_else(c, npc.names, npc.role) for c in acting)


_ANYONE = frozenset(keywords(" ".join(PEOPLE_NOUNS)))
"""Words that call anyone ("the fellow", "that man"): they name no one else."""


def _someone_else(clause: Clause, names: Iterable[str], role: str) -> bool:
    """Whether a clause of talk is to someone its words name and the person is not, by name or role ("talk to the
    receptionist hologram" with Dr Senda here, "have a word with the coastguard" with the boatman)."""
    said = clause.command.obj.lower() if clause.command.verb == "talk" else ""
    said = re.sub(r"^(?:to|with)\s+", "", said).strip()
    if not said or said in ("you", "him", "her", "them", "everyone", "anyone", "someone"):
        return False
    words = set(keywords(said)) - _ANYONE
    return bool(words) and not words & set(keywords(" ".join([*names, role])))


def _names_person(clause: Clause, names: Iterable[str], pack: ContentPack) -> bool:
    """Whether the clause names a person by one of ``names``, not counting the words of the full name of an
    item, enemy or place it names: "think about Hunter's Letter" does not name Old Garrick ("hunter")."""
    claimed: set[str] = set()
    for things in (pack.items, pack.enemies, pack.nodes):
        for thing in things.values():
            words = name_words(thing.name)
            if len(words) > 1 and words <= clause.words:
                claimed |= words
    return clause.names(tuple(names), frozenset(claimed))


def _moves_to(reading: Reading, node_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    node = pack.nodes.get(node_id)
    here = pack.nodes.get(state.node)
    if node is None or here is None:  # no such place: the player's only when they asked to go somewhere
        return bool(reading.binding("move"))
    if node_id in steps:
        return True
    return any(_goes(c, node_id, state, pack) for c in reading.binding("move"))


def _goes(clause: Clause, node_id: str, state: GameState, pack: ContentPack) -> bool:
    """Whether a clause of going goes to ``node_id``: by its name, a word of it, a way there, or whom it seeks."""
    node, here = pack.nodes[node_id], pack.nodes[state.node]
    if clause.names([node.name]) or clause.words & _place_words(pack, state.node, node_id):
        return True  # "head for the gate": a word of its name
    ways = [d for d, target in here.exits.items() if target == node_id]
    said = set(re.findall(r"[a-z]+(?:['’][a-z]+)*", clause.core))  # "hunter's" is one word, not "hunter" + "s"
    if any(d in said or d in (DIRECTIONS.get(w) for w in said) for d in ways):
        return True
    if clause.command.verb == "go" and DIRECTIONS.get(clause.command.target) in ways:
        return True
    if any(d in ("up", "down") for d in ways) and _VERTICAL.search(clause.core):
        return True
    people = [n for n in pack.npcs.values() if n.location == node_id]
    if any(clause.names(p.names) for p in people):
        return True  # "go find Hal": to where Hal is
    # "leave", "head back out": the one way out
    return len(set(here.exits.values())) == 1


def _item(clause: Clause, item_id: str, pack: ContentPack, steps: set[str], everything: Iterable[str]) -> bool:
    item = pack.items.get(item_id)
    if item is None:
        return True  # the rules refuse it as no such item
    if item_id in steps or clause.names([*item.names, item_id]) or clause.names_before([*item.names, item_id]):
        return True  # "take the herb and eat it": it is the herb
    pool = list(everything)
    if item_id in pool and _ALL.search(clause.core):
        return True  # "take everything"
    return len(set(pool)) == 1 and item_id in pool and clause.pronoun()


def _uses(reading: Reading, item_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    item = pack.items.get(item_id)
    if item is None:
        return bool(reading.binding("use", "fight"))
    for clause in reading.binding("use", "fight"):
        if _item(clause, item_id, pack, steps, state.inventory if "use" in clause.classes else []):
            return True
        if item.use and item.use.heal and _HEAL.search(clause.core):
            return True  # "heal me"
    return False


def _fights(reading: Reading, enemy_id: str, state: GameState, pack: ContentPack, steps: set[str]) -> bool:
    enemy = pack.enemies.get(enemy_id)
    if enemy is None:
        return bool(reading.binding("fight"))
    if enemy_id in steps:
        return True
    aliases = {name.lower() for name in enemy.names}
    kin = [n for n in pack.npcs.values() if aliases & {name.lower() for name in n.names}]
    for clause in reading.binding("fight"):
        if clause.command.verb != "attack" and _ATTACK.search(clause.core) is None:
            continue  # "flee the wolf", "block its bite" start no fight
        named = clause.names([*enemy.names, enemy_id]) or any(clause.names(n.names) for n in kin)  # Silas: the Lord
        if named or enemy_id in enemies_at(state, pack, state.node):
            return True
    return False


def _combat_move(reading: Reading, move: str) -> bool:
    for clause in reading.binding():
        verb = clause.command.verb
        if move == "attack" and (verb == "attack" or _ATTACK.search(clause.core)):
            return True
        if move == "flee" and (verb in ("flee", "go") or _FLEE.search(clause.core)):
            return True
        if move == "defend" and (verb in ("use", "defend") or _DEFEND.search(clause.core)):
            return True
    return False


def _chooses(reading: Reading, choice_id: str, pack: ContentPack) -> bool:
    choice = pack.choice(choice_id)
    if choice is None:  # the rules refuse it as no such choice when the player chose; else it is not theirs
        return bool(reading.binding())
    return any(whole_words(k.lower()).search(c.text) for c in reading.binding() for k in choice.keywords)


def _objective_targets(reading: Reading, state: GameState, pack: ContentPack) -> set[str]:
    """What the steps of the objectives still to do name, when a clause that binds says one in its own words.

    The clause's verb must mean the step's verb (``parser.verb_key``) and another of its words must be the
    step's; then the objective's target (and the person or place it involves) is asked for.
    """
    found: set[str] = set()
    for clause in reading.binding():
        words = re.findall(r"[a-z0-9'-]+", clause.core)
        if len(words) < 2 or "sense" in clause.classes:
            continue
        verb, said = verb_key(words[0]), set(keywords(" ".join(words[1:])))
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
