"""What the rules did with one turn's effects, and the state primitives every rule uses."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from game.world.intent import NOT_ASKED
from game.world.state import GameState

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

    def ok(self, effect: str, detail: str, message: str | None = None) -> None:
        self.applied.append(AppliedEffect(effect, detail))
        if message:
            self.messages.append(message)

    def reject(self, effect: str, value: Any, reason: str) -> None:
        log.info("rejected %s=%r: %s", effect, value, reason)
        self.rejected.append(RejectedEffect(effect, value, reason))


def record_event(state: GameState, out: Outcome, flag: str) -> bool:
    """Record that an event happened this turn; returns whether it is new."""
    out.events.add(flag)
    return state.add_flag(flag)


def gain_item(state: GameState, item_id: str) -> None:
    state.inventory.append(item_id)
    state.add_flag(f"obtained:{item_id}")


def bump_affinity(state: GameState, npc_id: str, delta: int) -> None:
    state.affinity[npc_id] = max(-100, min(100, state.affinity.get(npc_id, 0) + delta))
