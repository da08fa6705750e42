"""What the rules did with one turn's effects, and the state primitives every rule uses."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from game.language.parser import DIRECTIONS, PRONOUNS, Command
from game.language.reading import Reading
from game.text import best_match
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.intent import NOT_ASKED
from game.world.state import MAX_CARRIED, GameState

log = logging.getLogger("storyecho.rules")


@dataclass
class AppliedEffect:
    effect: str
    detail: str


@dataclass
class RejectedEffect:
    """An effect the rules refused; ``reason`` is for the trace, :attr:`told` for the player."""

    effect: str
    value: Any
    reason: str

    @property
    def told(self) -> str:
        """The refusal as the player reads it ("Heart of the Tree is not reachable from here."), or "".

        Claims only a narrator makes (quest progress, experience, affinity, a
        side quest, anything after the ending) are not the player's doing and
        are not told; ids never are.
        """
        if self.effect in UNTOLD or self.unasked:
            return ""
        if self.reason.startswith("no such "):
            return NO_SUCH.get(self.reason[len("no such ") :].split(":")[0], "")
        text = self.reason[:1].upper() + self.reason[1:]
        return text if text.endswith((".", "!", "?")) else f"{text}."

    @property
    def unasked(self) -> bool:
        """Refused because the action did not ask for it (``game.world.intent``): the narrator is asked again, and the
        player, who did not ask, is not told."""
        return self.reason == NOT_ASKED


UNTOLD = frozenset({"quest_updates", "exp_delta", "affinity", "trigger_side_quest", "*"})
"""Refused effects the player is not told about (see :attr:`RejectedEffect.told`)."""
NO_SUCH = {
    "item": "There is no such thing here.",
    "place": "There is no such place.",
    "character": "There is no one like that here.",
    "enemy": "There is nothing like that to fight here.",
}


@dataclass
class Outcome:
    """What the rules did with one turn's effects."""

    applied: list[AppliedEffect] = field(default_factory=list)
    rejected: list[RejectedEffect] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    events: set[str] = field(default_factory=set)
    """Event flags that happened this turn (set again or for the first time)."""
    free: bool = False
    """The turn cost no time (:func:`costs_nothing`): the turn, the clock and the enemies did not move."""
    said: list[tuple[str, str]] = field(default_factory=list)
    """Each message with the effect that said it (``claims.consequences_ahead`` leaves out those restating the act)."""

    def ok(self, effect: str, detail: str, message: str | None = None) -> None:
        self.applied.append(AppliedEffect(effect, detail))
        if message:
            self.messages.append(message)
            self.said.append((effect, message))

    def reject(self, effect: str, value: Any, reason: str) -> None:
        log.info("rejected %s=%r: %s", effect, value, reason)
        self.rejected.append(RejectedEffect(effect, value, reason))


CLAIMS = frozenset({"ending", "gold_delta", "hp_delta", "exp_delta", "items_gained"})
"""Effects a narrator claims on its own ("you find 500 gold", "the story ends"): their refusal is the narrator's,
not the player's act refused, so it never makes a turn free (a look told beside a refused claim is a turn, and
is remembered)."""


def player_refused(rejected: list[RejectedEffect]) -> bool:
    """Whether the rules refused the player's own act and told them why (a locked way, a boss that cannot be fled)."""
    return any(r.told and r.effect not in CLAIMS for r in rejected)


def costs_nothing(
    before: GameState,
    after: GameState,
    out: Outcome,
    reading: Reading | None,
    pack: ContentPack,
    *,
    refused_before: bool = False,
) -> bool:
    """Whether a turn whose effects the rules applied (``before`` -> ``after``, not yet advanced) costs no time.

    Nothing was applied and nothing changed, and either the player is fighting (a question or a look in a fight:
    the enemy waits for a move), or the action was refused: by the rules now or in the narrator's first answer
    (``refused_before``: a locked way, a boss that cannot be fled, a weaker weapon), or by the world itself, the
    act naming what is not there (:func:`nothing_there`: "go down" where there is no down, "attack" a friend). A
    look or a word outside a fight still lets time pass, and so does an act the narrator only failed to propose.
    An attack that is made is applied, hit or miss, and always costs its turn.
    """
    if out.applied or after != before or after.ending:
        return False
    if after.combat is not None or refused_before or player_refused(out.rejected):
        return True
    return reading is not None and any(nothing_there(c.command, before, pack) for c in reading.binding())


def nothing_there(command: Command, state: GameState, pack: ContentPack) -> bool:
    """Whether ``command`` acts on what is not there: a way that is no exit of this place ("go down"), no enemy
    here by that name ("attack garrick"), nothing here to take by that name, nothing carried to drop, give or sell,
    nothing sold here by that name ("buy a potion" from a hunter who sells none), a person of the story who is
    elsewhere ("talk to garrick" at the trailhead), or talk where there is nobody to hear it."""
    verb, target = command.verb, command.target
    if verb in PERSON_VERBS and command.obj and elsewhere(command.obj, state, pack):
        return True
    if verb == "talk" and not npcs_at(pack, state.node) and not enemies_at(state, pack, state.node):
        return True  # "talk to everyone", "ask about the lighthouse" with nobody here
    if not target:
        return False
    if verb in ("take", "drop", "use", "give") and target in PRONOUNS:
        return True  # "drop it", and nothing was applied: the word named no thing
    if verb == "buy":
        sellers = [pack.npcs[n].trade for n in npcs_at(pack, state.node)]
        sold = {i for trade in sellers if trade is not None for i in trade.sells if i in pack.items}
        return best_match(target, [(i, pack.items[i].names) for i in sorted(sold)]) is None
    if verb == "go":
        exits = pack.nodes[state.node].exits
        places = [(d, [pack.nodes[n].name, d]) for d, n in exits.items()]
        return DIRECTIONS.get(target, target) not in exits and best_match(target, places) is None
    if verb == "attack":
        return best_match(target, [(e, pack.enemies[e].names) for e in enemies_at(state, pack, state.node)]) is None
    if verb == "take":
        return best_match(target, [(i, pack.items[i].names) for i in items_at(state, pack, state.node)]) is None
    if verb in ("drop", "give", "sell"):
        return best_match(target, [(i, pack.items[i].names) for i in set(state.inventory) if i in pack.items]) is None
    return False


PERSON_VERBS = frozenset({"talk", "buy", "sell", "give"})
"""Verbs whose ``obj`` is the person the act is for: "talk to Garrick", "buy the herb from Garrick"."""


def elsewhere(name: str, state: GameState, pack: ContentPack) -> bool:
    """Whether ``name`` names a person of the story who is not here (not an owl or a stranger: those the narrator
    may still answer)."""
    here = npcs_at(pack, state.node)
    if best_match(name, [(n, pack.npcs[n].names) for n in here]) is not None:
        return False
    return best_match(name, [(n, npc.names) for n, npc in pack.npcs.items()]) is not None


def said_anyway(text: str) -> bool:
    """Whether the action tells the rules to go ahead all the same ("wield the pistol anyway")."""
    return ANYWAY.search(text.lower()) is not None


ANYWAY = re.compile(r"\b(?:anyway|anyhow|all\s+the\s+same|regardless)\b")


def record_event(state: GameState, out: Outcome, flag: str) -> bool:
    """Record that an event happened this turn; returns whether it is new."""
    out.events.add(flag)
    return state.add_flag(flag)


def full_hands(state: GameState) -> str | None:
    """Why the player can take nothing more (they carry :data:`MAX_CARRIED` things), or None."""
    if len(state.inventory) < MAX_CARRIED:
        return None
    return f"you carry too much to take anything more ({MAX_CARRIED} things): drop something first"


def no_room_here(state: GameState) -> str | None:
    """Why nothing more can be left here (:data:`MAX_CARRIED` things lie here already), or None."""
    if len(state.dropped_items.get(state.node, [])) < MAX_CARRIED:
        return None
    return f"there is no room to leave anything more here ({MAX_CARRIED} things lie here): take something first"


def gain_item(state: GameState, item_id: str) -> None:
    """The player gains ``item_id``; with full hands (a reward, a foe's loot) it is left on the ground here, unless
    the ground here is full too (then it is not kept: a save holds no more, ``state.MAX_CARRIED``)."""
    if len(state.inventory) >= MAX_CARRIED:
        if no_room_here(state) is None:
            state.dropped_items.setdefault(state.node, []).append(item_id)
        return
    state.inventory.append(item_id)
    state.add_flag(f"obtained:{item_id}")


def bump_affinity(state: GameState, npc_id: str, delta: int) -> None:
    state.affinity[npc_id] = max(-100, min(100, state.affinity.get(npc_id, 0) + delta))
