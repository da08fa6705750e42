"""The answer to a question the game asked back (issue 41): "Do you mean: take the Healing Herb?  1. yes  2. no".

The game asks back when it is unsure what a line asks, or when a consequential act is asked in words that are not
plain (``game.world.asked``); the next line answers. :func:`answer` reads that line: yes (or key 1), no (or key
2), the number or the words of one of several acts offered; anything else is a line of its own, and the question
is dropped. :func:`refused_outright` is the rules' refusal of an act, said before any narrator is called;
:func:`offered_instead` asks back what a narrator read in a line the reader left open (``game.world.proposed``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from game.language.reading import normal
from game.world.acts import Act, Scene, effects_of
from game.world.asked import NOTHING, Asked
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.proposed import plausible, proposed
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
    one = len(offer) == 1 or pending.together
    if words in NO or (words == "2" and one):
        return False
    if one:
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


def offered_instead(asked: Asked, rejected: list[RejectedEffect], state: GameState, rules: Rules) -> Asked | None:
    """``asked`` with the acts a narrator proposed for it offered back, when the reader left the line open and
    refused them as not asked, and they are plausible and the rules would allow them (``game.world.proposed``);
    None: the refusal stands."""
    if asked.kind not in ("open", "nothing") or asked.nothing in NOTHING.values():
        return None
    scene = Scene.of(state, rules.pack)
    offer = []
    for act in proposed((r.effect, r.value) for r in rejected if r.unasked):
        if plausible(act, asked.reading.text, scene) and _allowed(act, state, rules):
            offer.append(act)
    if not offer:
        return None
    note = "the narrator read: " + ", ".join(a.describe(rules.pack) for a in offer)
    return replace(asked, offer=tuple(offer[:4]), notes=(*asked.notes, note))


def _allowed(act: Act, state: GameState, rules: Rules) -> bool:
    """Whether the rules would carry ``act`` out as things stand (tried on a copy)."""
    tried = rules.apply(state.snapshot(), Effects.model_validate(effects_of((act,), state)))
    return not any(r.told or r.unasked for r in tried.rejected)
