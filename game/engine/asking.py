"""The answer to a question the game asked back (issue 41): "Do you mean: take the Healing Herb?  1. yes  2. no".

The game asks back when it is unsure what a line asks, or when a consequential act is asked in words that are not
plain (``game.world.asked``); the next line answers. :func:`answer` reads that line: yes (or key 1), no (or key
2), the number or the words of one of several acts offered; anything else is a line of its own, and the question
is dropped. :func:`refused_outright` is the rules' refusal of an act, said before any narrator is called.
"""

from __future__ import annotations

from typing import Literal

from game.language.reading import normal
from game.world.asked import Asked, effects_of
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.rules import RejectedEffect, Rules
from game.world.rules.core import said_anyway
from game.world.state import GameState

YES = frozenset(
    {"yes", "y", "yeah", "yep", "yup", "sure", "ok", "okay", "aye", "1", "correct", "right", "indeed", "exactly"}
    | {"do it", "go ahead", "please", "yes please", "yes, please", "that's right", "i do", "i did"}
)
"""Answers that take what the game offered back (an offer of one act; key 1 is "yes")."""
NO = frozenset({"no", "n", "nope", "nah", "cancel", "neither", "never mind", "nevermind", "forget it", "no thanks"})
"""Answers that take none of it (key 2 on a yes-or-no question)."""


def answer(pending: Asked, said: str, pack: ContentPack) -> Asked | Literal[False] | None:
    """What ``said`` answers to ``pending`` (an offer): the line of the act picked, False for no, None for no
    answer."""
    words = normal(said).lower().strip(" .!?")
    offer = pending.offer
    if words in NO or (words == "2" and len(offer) == 1):
        return False
    if len(offer) == 1:
        return Asked(pending.reading, acts=offer) if words in YES else None
    picked = [a for i, a in enumerate(offer, 1) if words in (str(i), a.describe(pack).lower())]
    return Asked(pending.reading, acts=(picked[0],)) if picked else None


_PLAYER_ACTS = frozenset(
    {"talk_to", "move_to", "items_gained", "items_lost", "use_item", "give_item", "give_gold", "trade", "rest"}
    | {"start_combat", "combat_action", "choice", "choice_failed"}
)
"""What the rules applied of the player's own acts (a refusal of all of them is told before any narrator)."""


def refused_outright(
    asked: Asked, state: GameState, rules: Rules, action: str
) -> tuple[str, list[RejectedEffect]] | None:
    """The rules' refusal of a line's first step, tried on a copy of the state before any narrator is called
    ("This place is too dangerous to rest."), and what they refused; None when they allow any of it (or a fight is
    on: a blow is the fight's to tell)."""
    if not asked.acts or state.combat:
        return None
    effects = Effects.model_validate(effects_of(asked.steps()[0], state))
    tried = rules.apply(state.snapshot(), effects, anyway=said_anyway(action))
    told = list(dict.fromkeys(r.told for r in tried.rejected if r.told))
    if not told or any(a.effect in _PLAYER_ACTS for a in tried.applied):
        return None
    return " ".join(told), tried.rejected
